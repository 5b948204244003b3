"""Vectorised vs per-vehicle-loop throughput (CASPS) of the SceneFactory torch rebuild, side by side in one process.

Usage: .venv/bin/python bench/scenefactory_throughput.py [--worlds 16 64 256] [--agents 16] [--steps 10]
Prints CASPS of the full vectorised pipeline (physics + observation + reward + policy), of the vectorised physics
alone, and of the non-vectorised per-vehicle loop of the same single-track physics, with the ratios.
"""

from __future__ import annotations

import argparse
import sys

import torch

from compute.core.reporter import MemoryReporter
from compute.scenefactory.run import throughput


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worlds", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--agents", type=int, nargs="+", default=[16])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--backend", default="single_track")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    torch.set_num_threads(1)
    r = MemoryReporter()
    throughput(
        {
            "worlds": a.worlds,
            "agents": a.agents,
            "steps": a.steps,
            "backend": a.backend,
            "loop_agents": 64,
            "loop_steps": 1,
            "device": a.device,
            "seed": 0,
        },
        r,
    )
    cols = [
        "config",
        "agents",
        "casps_vectorised",
        "casps_vectorised_physics",
        "casps_loop",
        "speedup",
        "speedup_physics",
        "physics_ms",
        "observation_ms",
        "reward_ms",
        "policy_ms",
    ]
    print(f"# backend={a.backend} device={a.device} torch threads=1 (CASPS are this machine's, not PhysX's)")
    print(" | ".join(cols))
    for row in r.tables["throughput"]["rows"]:
        print(" | ".join(f"{row.get(c):,.1f}" if isinstance(row.get(c), float) else str(row.get(c)) for c in cols))
    sys.stdout.flush()


if __name__ == "__main__":
    main()

"""modular_control throughput: env steps/s (batched), policy inference and PPO update samples/s, side by side.

    .venv/bin/python bench/modular_control_speed.py [--quick]

Prints every measurement and the ratios against ModRec (inference, update) and against the Python stepping loop.
Results are recorded in docs/benchmarks/modular_control.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from compute.modular_control.bench import run_all  # noqa: E402


def main() -> None:
    torch.set_num_threads(1)
    rows = run_all(quick="--quick" in sys.argv)
    ref: dict[str, float] = {}
    for r in rows:
        if r["setting"] in ("modrec", "walker_7_main") and "rollout" not in str(r["quantity"]):
            ref[str(r["quantity"])] = float(r["value"])
    base_phys = ref.get("physics steps/s, Python loop", 1.0)
    print(f"{'quantity':40s} {'setting':16s} {'value':>10s} {'ratio':>8s}")
    for r in rows:
        q, v = str(r["quantity"]), float(r["value"])
        if q.startswith("physics"):
            ratio = v / base_phys
        else:
            ratio = v / ref[q] if q in ref else float("nan")
        print(f"{q:40s} {str(r['setting']):16s} {v:10.0f} {ratio:8.2f}")


if __name__ == "__main__":
    main()

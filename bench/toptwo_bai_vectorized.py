"""Benchmark: runs/second of the vectorized β-EB-TCI simulator vs a plain per-run Python loop; EB-TCI vs Track-and-Stop.

Usage:  .venv/bin/python bench/toptwo_bai_vectorized.py [--runs 100] [--big 1000] [--delta 0.1]

Everything runs in one process, side by side, so machine contention affects every line alike; CPU seconds
(process time) are printed next to wall seconds.  Output is a Markdown table for docs/benchmarks/toptwo_bai.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compute.toptwo_bai.characteristic import t_star_beta  # noqa: E402
from compute.toptwo_bai.config import INSTANCES  # noqa: E402
from compute.toptwo_bai.simulator import Sampler, simulate, simulate_loop  # noqa: E402


def timed(fn):  # type: ignore[no-untyped-def]
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100, help="R for the side-by-side comparison")
    ap.add_argument("--big", type=int, default=1000, help="R for the large vectorized batch (0 to skip)")
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--instance", default="gk16_mu1")
    ap.add_argument("--torch", action=argparse.BooleanOptionalAction, default=True, help="also time the torch path")
    args = ap.parse_args()
    mu = list(INSTANCES[args.instance])
    tb = t_star_beta(mu, 0.5).time
    scale = tb * np.log(1 / args.delta)
    rows = []

    def add(name: str, r: int, tau: np.ndarray, wall: float, cpu: float) -> None:
        rows.append((name, r, float(np.mean(tau)), float(np.mean(tau)) / scale, wall, cpu, r / cpu))

    res, w, c = timed(lambda: simulate(mu, Sampler(), [args.delta], args.runs, np.random.default_rng(0)))
    add("vectorized numpy, ½-EB-TCI", args.runs, res.tau[:, 0], w, c)
    loop, w, c = timed(lambda: simulate_loop(mu, Sampler(), args.delta, args.runs, np.random.default_rng(0)))
    add("plain Python loop, ½-EB-TCI", args.runs, loop[:, 0], w, c)
    if args.big:
        res, w, c = timed(lambda: simulate(mu, Sampler(), [args.delta], args.big, np.random.default_rng(1)))
        add("vectorized numpy, ½-EB-TCI", args.big, res.tau[:, 0], w, c)
    if args.torch:
        import torch

        from compute.toptwo_bai.torch_sim import simulate_torch

        torch.set_num_threads(1)
        device = "cuda" if torch.cuda.is_available() else "cpu"
        out, w, c = timed(lambda: simulate_torch(mu, Sampler(), [args.delta], args.big or args.runs, 0, device))
        add(f"torch ({device}, masked), ½-EB-TCI", args.big or args.runs, out["tau"][:, 0], w, c)
    res, w, c = timed(
        lambda: simulate(mu, Sampler("track_and_stop"), [args.delta], args.runs, np.random.default_rng(0))
    )
    add("vectorized numpy, Track-and-Stop (w* every 50 steps)", args.runs, res.tau[:, 0], w, c)

    print(f"instance {args.instance} μ = {mu}, δ = {args.delta:g}, heuristic threshold, T*_½·log(1/δ) = {scale:.0f}\n")
    print("| simulator | R | E[τ] | E[τ]/(T*_½ log 1/δ) | wall s | CPU s | runs / CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r, mean, ratio, wall, cpu, rps in rows:
        print(f"| {name} | {r} | {mean:.0f} | {ratio:.2f} | {wall:.2f} | {cpu:.2f} | {rps:.1f} |")
    base = rows[1][6]
    print()
    print(f"speed-up vectorized/loop at R = {args.runs}: {rows[0][6] / base:.1f}× (runs per CPU second)")
    if args.big:
        print(f"speed-up vectorized/loop at R = {args.big}: {rows[2][6] / base:.1f}×")
    print(f"Track-and-Stop / EB-TCI CPU time at R = {args.runs}: {rows[-1][5] / rows[0][5]:.1f}×")
    print("(runs / CPU s: R divided by the process CPU time of the whole batch, so lock-step waiting on the slowest")
    print(" run counts against the vectorized simulators; CPU time is insensitive to other processes on the machine)")


if __name__ == "__main__":
    main()

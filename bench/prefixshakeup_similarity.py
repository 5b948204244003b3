"""Benchmark: all-pairs Jaccard (sparse X·Xᵀ vs packed-bitset popcount vs Python sets) and end-to-end prompts/s.

Run (from the repository root):  PYTHONPATH=. .venv/bin/python bench/prefixshakeup_similarity.py [--users 250,500,1000]

Rows (same process, one thread, best of --repeat; engine policies interleaved per repeat, median):
* similarity: users/s of the three all-pairs Jaccard implementations (Python sets only up to --max-sets users);
* engine: prompts/s per policy on the real tiny LM (4 layers, d = 256, random init) with prefix-KV reuse at a
  binding KV capacity, planning time included, and the ratio to LPM sorting.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.prefixshakeup.engine import Engine
from compute.prefixshakeup.reform import make_plan, plan_shakeup
from compute.prefixshakeup.similarity import jaccard_bitset, jaccard_matmul, jaccard_sets
from compute.prefixshakeup.tagger import MODEL_SIZES
from compute.prefixshakeup.workload import VOCAB, WorkloadConfig, generate


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", default="250,500,1000,2000")
    ap.add_argument("--max-sets", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engine-prompts", type=int, default=60)
    ap.add_argument("--records", type=int, default=60)
    ap.add_argument("--capacity", type=int, default=8000)
    ap.add_argument("--skip-similarity", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("== all-pairs Jaccard (users/s; ratio = matmul / other)")
    print(f"{'users':>6} {'matmul':>10} {'bitset':>10} {'sets':>10} {'×bitset':>8} {'×sets':>8}")
    for n in [] if args.skip_similarity else [int(x) for x in args.users.split(",")]:
        wl = generate(WorkloadConfig(users=n, seed=0))
        t_mm = _best(lambda wl=wl: jaccard_matmul(wl.records, wl.cfg.templates), args.repeat)
        t_bs = _best(lambda wl=wl: jaccard_bitset(wl.records, wl.cfg.templates), args.repeat)
        t_py = _best(lambda wl=wl: jaccard_sets(wl.records), 1) if n <= args.max_sets else float("nan")
        print(f"{n:>6} {n / t_mm:>10.0f} {n / t_bs:>10.0f} {n / t_py:>10.0f} {t_bs / t_mm:>8.2f} {t_py / t_mm:>8.2f}")
    print(
        f"\n== real engine, {args.engine_prompts} prompts, capacity {args.capacity} tokens (prompts/s, planning incl.)"
    )
    wl = generate(
        WorkloadConfig(
            users=args.engine_prompts,
            records_mean=args.records,
            records_min=args.records // 2,
            records_max=3 * args.records,
            seed=0,
        )
    )
    d, n_l, n_h, ff = MODEL_SIZES["spec"]
    torch.manual_seed(0)
    eng = Engine(TinyLM(LMConfig(vocab_size=len(VOCAB), d_model=d, n_layers=n_l, n_heads=n_h, d_ff=ff)))
    plans = {p: make_plan(p, wl, m=10) if p == "ggr" else make_plan(p, wl) for p in ("original", "lpm", "ggr")}
    plans["shakeup d=0"] = plan_shakeup(wl, 0, 10, args.capacity)
    plans["shakeup d=8"] = plan_shakeup(wl, 8, 10, args.capacity)
    eng.run(plans["original"].prompts(wl)[:5], args.capacity)  # warm-up
    prompts = {name: plan.prompts(wl) for name, plan in plans.items()}
    secs: dict[str, list[float]] = {name: [] for name in plans}
    phr = {}
    for _ in range(args.repeat):  # policies interleaved within each repeat, so load drifts hit all of them
        for name in plans:
            run = eng.run(prompts[name], args.capacity)
            secs[name].append(run.total_seconds)
            phr[name] = run.sched.phr
    thr = {}
    for name, plan in plans.items():
        thr[name] = len(prompts[name]) / (plan.planning_seconds + float(np.median(secs[name])))
        print(f"{name:>12}: {thr[name]:8.2f} prompts/s  PHR {phr[name]:.3f}  planning {plan.planning_seconds:.3f} s")
    print("ratios vs lpm: " + ", ".join(f"{k} {v / thr['lpm']:.2f}×" for k, v in thr.items()))
    print("ratios vs original: " + ", ".join(f"{k} {v / thr['original']:.2f}×" for k, v in thr.items()))


if __name__ == "__main__":
    main()

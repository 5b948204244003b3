"""Benchmark: Best-of-N, Resampling and LoTTS side by side at equal NFE budgets with common random numbers.

Run (from the repository root, after the build step has cached the world):
    PYTHONPATH=. .venv/bin/python bench/lotts_quality_vs_nfe.py [--prompts 16] [--seed 0] [--micro]

All methods start from the same seeded initial noises (LoTTS's k candidates are Best-of-N's first k).
NFE is read from the one counter inside the UNet wrapper (1 NFE = one UNet pass on one image; CFG step = 2).
Prints, for each method, the NFE-counter total and the held-out score per budget; then the NFE ratio
Best-of-N / LoTTS at equal held-out quality (CNN score and template residual).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from compute.lotts.config import MICRO_WORLD, SearchConfig
from compute.lotts.experiments import nfe_at_quality, quality_vs_nfe
from compute.lotts.world import build_world


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--micro", action="store_true", help="use the micro (test) world")
    ap.add_argument("--data", default="data")
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = SearchConfig(n_prompts=args.prompts, **(MICRO_WORLD if args.micro else {}))
    world = build_world(cfg, Path(args.data) / "lotts")
    t = time.perf_counter()
    run = quality_vs_nfe(world, cfg, args.seed)
    secs = time.perf_counter() - t
    print(f"world s{cfg.size} w{cfg.width} ({cfg.key()}), {cfg.n_prompts} prompts, seed {args.seed}, {secs:.0f} s")
    print(f"UNet image-forward counter total: {world.net.nfe} (one candidate = {run.nfe_sample:g} NFE)")
    print()
    print(f"{'method':<22}{'N/k':>5}{'NFE':>9}{'held-out':>10}{'p(clean)':>10}{'template':>10}{'select':>9}")
    res = {"Best-of-N": (run.bon, cfg.bon_n), **{m: (r, cfg.lotts_k) for m, r in run.methods.items()}}
    for name, (r, budgets) in res.items():
        for i, n in enumerate(budgets):
            print(
                f"{name:<22}{n:>5}{r.nfe[i]:>9.1f}{r.heldout[i].mean():>10.3f}{r.p_clean[i].mean():>10.3f}"
                f"{r.template[i].mean():>10.4f}{r.select[i].mean():>9.3f}"
            )
    print()
    for metric, sign in (("heldout", 1.0), ("template", -1.0)):
        qb = sign * getattr(run.bon, metric).mean(1)
        for m, r in run.methods.items():
            ql = sign * getattr(r, metric).mean(1)
            for i, N in enumerate(cfg.bon_n):
                if N < 4:
                    continue
                need = nfe_at_quality(r.nfe, ql, float(qb[i]))
                ratio = "not reached" if need is None else f"{run.bon.nfe[i] / need:.2f}×"
                print(
                    f"{metric:<9} Best-of-{N:<3} ({run.bon.nfe[i]:6.0f} NFE) vs {m:<12}: NFE ratio at equal quality {ratio}"
                )
    print()
    for k, v in run.consistency.items():
        print(f"{k}: {v:.6f}")
    _ = np


if __name__ == "__main__":
    main()

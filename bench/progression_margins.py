"""LR-STEP (linear on the compass) vs the supervised MS-DCNN-like CNN, per data source, mean ± std over seeds.

    PYTHONPATH=. .venv/bin/python bench/progression_margins.py --sources fd001 fd002 --n-units 40 --epochs 15 --seeds 3

Runs compute.progression.run:rul_end_state once per source (all seeds in one process, side by side) and prints
RMSE / PHM08 per method with the ratios LR-STEP/CNN and Tr-STEP/CNN. ``--json`` writes the rows to a file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from compute.core.reporter import MemoryReporter
from compute.progression.run import rul_end_state


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sources", nargs="+", default=["fd001", "fd002", "fd003", "fd004", "neural", "reacher"])
    ap.add_argument("--n-units", type=int, default=40)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--head-epochs", type=int, default=8)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--grouping", default="rul")
    ap.add_argument("--ssl", action="store_true", help="also the AE and SoftCLT-like baselines")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    torch.set_num_threads(1)
    out = []
    for src in a.sources:
        t0 = time.time()
        rep = MemoryReporter()
        params = {
            "source": src,
            "n_units": a.n_units,
            "epochs": a.epochs,
            "head_epochs": a.head_epochs,
            "n_seeds": a.seeds,
            "grouping": a.grouping,
            "ssl_baselines": a.ssl,
            "seed": 0,
            "device": "cpu",
        }
        summary = rul_end_state(params, rep)
        rows = rep.tables["rul_methods"]["rows"]
        dt = time.time() - t0
        print(f"\n== {src} ({a.seeds} seeds, {a.n_units} units, {a.epochs} epochs, grouping={a.grouping}): {dt:.0f} s")
        for r in rows:
            print(f"  {r['method']:<11} RMSE {r['rmse']:7.2f} ± {r['rmse_std']:5.2f}   PHM08 {r['phm_score']:9.1f}")
        print(
            f"  LR-STEP / CNN = {summary[f'{src}/lr_step_over_cnn']:.3f}   "
            f"Tr-STEP / CNN = {summary[f'{src}/tr_step_over_cnn']:.3f}"
        )
        sys.stdout.flush()
        out.append({"source": src, "seconds": dt, "rows": rows, "summary": summary})
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()

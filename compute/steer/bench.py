"""Methods × seeds side by side (spec steer §3 "Benchmark script"): one table (PDMS, EPDMS-lite, per-tier PDMS and
CoT ratio, tokens, latency) and a Pareto CSV, all measured in one process from one SFT checkpoint.

    .venv/bin/python -m compute.steer.bench --methods steer,always_cot,never_cot --seeds 0 --steps 60 \
        --out /tmp/steer_bench

Latency is the greedy evaluation's wall time per scene on this machine (noisy on shared CPUs; tokens are the
primary cost).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from compute.core.reporter import MemoryReporter
from compute.steer.config import METHOD_LABELS, SteerConfig
from compute.steer.evaluate import rollout_eval
from compute.steer.run import FORCED, _checkpoint, final_problems, pareto_front, train_one
from compute.steer.scenes import TIERS


def bench(cfg: SteerConfig, methods: list[str], seeds: list[int], lams: dict[str, float], data_dir: str) -> list[dict]:
    rep = MemoryReporter(data_dir=data_dir)
    res = _checkpoint(cfg, rep)
    problems = final_problems(cfg, res.task)
    rows: list[dict[str, Any]] = []
    for m in methods:
        for seed in seeds:
            lam = lams.get(m, cfg.lam)
            out = train_one(cfg, res, m, lam, seed, rep, problems, stream=False)
            t0 = time.perf_counter()
            rollout_eval(out["model"], res.task, problems[:100], FORCED.get(m), cfg.max_new)
            s = out["summary"]
            row = {
                "method": METHOD_LABELS[m],
                "lam": lam,
                "seed": seed,
                "pdms": s["pdms_all"],
                "epdms": s["epdms_all"],
                **{f"pdms_{t}": s[f"pdms_{t}"] for t in TIERS},
                **{f"cot_{t}": s[f"cot_{t}"] for t in TIERS},
                "tokens": s["tokens_all"],
                "latency_ms": 1000 * (time.perf_counter() - t0) / 100,
                "spearman": s["spearman_tier_cot"],
            }
            rows.append(row)
            print(json.dumps(row))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", default="steer,always_cot,never_cot,grpo,length_penalty,adathink,label_router")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--lam", type=float, default=1e-3)
    ap.add_argument("--data", default="data")
    ap.add_argument("--out", default="/tmp/steer_bench")
    a = ap.parse_args()
    torch.set_num_threads(1)
    cfg = SteerConfig(steps=a.steps, lam=a.lam)
    methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    rows = bench(cfg, methods, [int(s) for s in a.seeds.split(",")], {}, a.data)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    front = set(pareto_front([(r["tokens"], r["epdms"]) for r in rows]))
    with open(out / "pareto.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*rows[0].keys(), "on_front"])
        w.writeheader()
        for i, r in enumerate(rows):
            w.writerow({**r, "on_front": i in front})
    cols = list(rows[0].keys())
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r.values()) + " |")
    (out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(
        "mean tokens by method:",
        {
            m: float(np.mean([r["tokens"] for r in rows if r["method"] == m]))
            for m in dict.fromkeys(r["method"] for r in rows)
        },
    )


if __name__ == "__main__":
    main()

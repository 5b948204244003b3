"""Benchmark: the problem suite × agents × seeds (spec §4 "Benchmark script").

``python -m compute.sregym.bench --seeds 2 --out results/`` writes per-problem verdicts
(verdicts.csv, verdicts.json), category aggregates (categories.json) and TTD/TTL/TTM
distributions (times.json). One incident at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import statistics
import sys
import time
from pathlib import Path

from compute.core.reporter import ConsoleReporter
from compute.sregym import jobs


def run_job(job: str, params: dict, out: Path) -> dict:
    """Run another experiment body (metastability, noise_robustness, incident) and save its tables as JSON."""
    out.mkdir(parents=True, exist_ok=True)
    rep = ConsoleReporter(sys.stderr)
    t0 = time.time()
    summary = asyncio.run(getattr(jobs, job)(params, rep))
    summary["wall_s"] = round(time.time() - t0, 1)
    for key, table in rep.tables.items():
        (out / f"{key}.json").write_text(json.dumps(table["rows"], indent=1, default=str))
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print(json.dumps(summary, indent=1, default=str))
    return summary


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--job", default="sweep", help="sweep | metastability | noise_robustness | incident")
    ap.add_argument("--params", default="{}", help="JSON parameters for --job other than sweep")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--agents", default="scripted")
    ap.add_argument("--problems", default="suite")
    ap.add_argument("--noise", default="off")
    ap.add_argument("--llm-base-url", default="")
    ap.add_argument("--out", default="sregym-bench")
    a = ap.parse_args(argv)
    if a.job != "sweep":
        return run_job(a.job, json.loads(a.params), Path(a.out))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rep = ConsoleReporter(sys.stderr)
    params = {"problem_set": a.problems, "agents": a.agents, "n_seeds": a.seeds, "seed": a.seed, "noise": a.noise,
              "llm_base_url": a.llm_base_url}  # fmt: skip
    t0 = time.time()
    summary = asyncio.run(jobs.sweep(params, rep))
    rows = rep.tables["verdicts"]["rows"]
    with open(out / "verdicts.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=rep.tables["verdicts"]["columns"])
        w.writeheader()
        w.writerows(rows)
    (out / "verdicts.json").write_text(json.dumps(rows, indent=1))
    (out / "categories.json").write_text(json.dumps(rep.tables["categories"]["rows"], indent=1))
    times = {}
    for k in ("ttd", "ttl", "ttm"):
        vals = sorted(r[k] for r in rows if r.get(k) is not None)
        times[k] = {"n": len(vals), "median": statistics.median(vals) if vals else None, "values": vals}
    (out / "times.json").write_text(json.dumps(times, indent=1))
    summary["wall_s"] = round(time.time() - t0, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    for row in rep.tables["categories"]["rows"]:
        print(row)
    return summary


if __name__ == "__main__":
    main()

"""Measure the verifiable_dp headline numbers by running the declared experiments (ConsoleReporter).

Usage: .venv/bin/python bench/verifiable_dp_results.py [protocol|error|load|privacy|all]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere: repo root on the path

import json
import time

from apps.verifiable_dp.experiments import ERROR, LOAD, PRIVACY, PROTOCOL
from compute.core.reporter import ConsoleReporter

RUNS = {
    "protocol": [
        (PROTOCOL, "defaults (SN-VBM, m=3, ε=1)", {}),
        (PROTOCOL, "SN-VLM defaults", {"mechanism": "sn_vlm"}),
        (PROTOCOL, "independent, m=3, ε=1", {"mechanism": "independent"}),
        (PROTOCOL, "every cheat", PROTOCOL.presets["every cheat"]),
        (PROTOCOL, "every cheat, SN-VLM", {**PROTOCOL.presets["every cheat"], "mechanism": "sn_vlm", "k": 8}),
        (PROTOCOL, "completeness 100 seeds", PROTOCOL.presets["completeness 100 seeds"]),
    ],
    "error": [(ERROR, "paper headline", ERROR.presets["paper headline"])],
    "load": [(LOAD, "defaults", {})],
    "privacy": [
        (PRIVACY, "defaults (ε=1)", {}),
        (PRIVACY, "ε=0.1", {"eps": 0.1}),
    ],
}


def main(which: str) -> None:
    for key, runs in RUNS.items():
        if which not in ("all", key):
            continue
        for exp, name, params in runs:
            rep = ConsoleReporter(sys.stderr)
            t0 = time.perf_counter()
            summary = exp.run_local(params, rep)
            print(f"\n=== {exp.slug}: {name} ({time.perf_counter() - t0:.1f} s) ===")
            print(json.dumps(summary, indent=1, default=str))
            for tkey, tab in rep.tables.items():
                if tkey in ("load_counts",):
                    continue
                print(f"-- table {tkey}")
                for row in tab["rows"]:
                    print("   ", json.dumps(row, ensure_ascii=False, default=str))
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "all")

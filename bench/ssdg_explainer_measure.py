"""Run one ssdg_explainer experiment in-process and print its tables (the command behind docs/papers/ssdg_explainer.md).

    PYTHONPATH=. .venv/bin/python bench/ssdg_explainer_measure.py <experiment> <preset|default> ['<json overrides>']

The GNN cache goes to $SSDG_DATA_DIR (default ``data``).
"""

from __future__ import annotations

import json
import os
import sys
import time

import torch

from apps.ssdg_explainer.experiments import EXPERIMENTS
from compute.core.reporter import MemoryReporter


def main() -> None:
    torch.set_num_threads(1)
    slug, preset = sys.argv[1], sys.argv[2]
    over = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    exp = {e.slug: e for e in EXPERIMENTS}[slug]
    params = (dict(exp.presets[preset]) if preset != "default" else {}) | over
    rep = MemoryReporter(data_dir=os.environ.get("SSDG_DATA_DIR", "data"))
    t = time.time()
    summary = exp.run_local(params, rep)
    print("CMD", slug, preset, json.dumps(over), f"{time.time() - t:.0f}s", flush=True)
    for key, tab in rep.tables.items():
        print("TABLE", key)
        for row in tab["rows"]:
            print("  ", json.dumps(row))
    print("SUMMARY", json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()

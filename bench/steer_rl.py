"""Run a list of E1 route-RL jobs one after the other and dump each summary, per-tier table and series to JSON.

    PYTHONPATH=. .venv/bin/python bench/steer_rl.py OUT_DIR '{"size": "small", "cot": "rel", "threads": 1}' \
        steer:0 always_cot:0 never_cot:0 length_penalty:0 steer:1 ...

Each job is ``route_rl({**base, "method": M, "seed": S}, reporter)`` (the experiment's own entry point); a job
whose JSON already exists in OUT_DIR is skipped, so the list can be resumed.  The data directory (checkpoints,
saved policies) is ``data`` unless ``STEER_DATA_DIR`` names another.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from compute.core.reporter import ConsoleReporter, _jsonable
from compute.steer.run import route_rl


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    base = json.loads(sys.argv[2])
    for job in sys.argv[3:]:
        method, seed = job.split(":")
        path = out / f"{method}_s{seed}.json"
        if path.exists():
            continue
        rep = ConsoleReporter(sys.stderr, data_dir=os.environ.get("STEER_DATA_DIR", "data"))
        t0 = time.time()
        summary = route_rl({**base, "method": method, "seed": int(seed)}, rep)
        blob = {
            "params": {**base, "method": method, "seed": int(seed)},
            "summary": summary,
            "tables": rep.tables,
            "series": {k: {"steps": v[0], "values": v[1]} for k, v in rep.points.items()},
            "wall_s": time.time() - t0,
        }
        path.write_text(json.dumps(_jsonable(blob)))
        print(json.dumps(_jsonable(summary)), flush=True)


if __name__ == "__main__":
    main()

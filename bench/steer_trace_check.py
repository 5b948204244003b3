"""How well an SFT checkpoint writes its own reasoning trace: greedy CoT on held-out scenes of the given tiers
(default hard), per hidden scene kind — the share of scenes whose written lane values (the number that closes each
``L<i> …`` group of the ``rel`` trace) all equal the true ones (``traces.lane_verdicts``), the share whose
``meta`` (the plan's library parameters) is the expert's, and the mean score against the expert's.

    PYTHONPATH=. .venv/bin/python bench/steer_trace_check.py '{"size": "medium", "sft_tokens": 6000000,
        "sft_lr": 2e-3, "n_pool": 20000, "cot": "rel", "scenes": "v2", "threads": 1, "n": 200}'

The scenes are ``task.sample(n, split_rng(777, "test"), "test")``, those of ``bench/steer_landscape.py``.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict

import numpy as np

from compute.core.reporter import ConsoleReporter
from compute.core.tasks import split_rng
from compute.steer.evaluate import rollout_eval
from compute.steer.run import _checkpoint, _setup
from compute.steer.scenes import scene_kind
from compute.steer.traces import THINK, lane_verdicts


def written_lane_values(text: str) -> dict[int, int]:
    """``{lane: value}`` from the first ``;``-separated part of a ``rel`` trace: the last integer of each group."""
    body = text.split("|")[0].replace(THINK, "").split(";")[0].split()
    out: dict[int, int] = {}
    lane, last = None, None
    for t in body + ["L-"]:
        if t.startswith("L"):
            if lane is not None and last is not None:
                out[lane] = last
            lane, last = (int(t[1:]) if t[1:].isdigit() else None), None
        elif t.isdigit():
            last = int(t)
    return out


def main() -> None:
    p = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    n = int(p.pop("n", 200))
    tiers = p.pop("tiers", "hard")
    cfg = _setup(p)
    res = _checkpoint(cfg, ConsoleReporter(sys.stderr, data_dir=os.environ.get("STEER_DATA_DIR", "data")))
    res.task.tiers = tuple(tiers.split(","))
    probs = res.task.sample(n, split_rng(777, "test"), "test")
    rows = rollout_eval(res.model, res.task, probs, route=THINK, keep_text=True)
    by: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for pr, r in zip(probs, rows, strict=True):
        s, a = pr.data["scene"], pr.data["analysis"]
        e = a.expert
        g = by[scene_kind(s)]
        g["values_exact"].append(float(written_lane_values(r["text"]) == lane_verdicts(s)))
        g["meta_exact"].append(float(f"meta {e.a1} {e.k} {e.a2} {e.lat} {e.j}" in r["text"]))
        g["score"].append(r["epdms"])
        g["expert"].append(a.expert_score)
    for kind, g in sorted(by.items()):
        print(
            json.dumps({"kind": kind, "n": len(g["score"]), **{k: round(float(np.mean(v)), 3) for k, v in g.items()}})
        )


if __name__ == "__main__":
    main()

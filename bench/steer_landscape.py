"""Sampled-reward landscape of an SFT checkpoint: mean EPDMS-lite of ``samples`` sampled responses per scene with the
route forced, per hidden tier and rollout temperature (what the label-free RL signals see), and the paired per-scene
difference CoT − direct with its standard error (scenes are the unit: each scene's score is the mean over samples).

    PYTHONPATH=. .venv/bin/python bench/steer_landscape.py '{"size": "small", "sft_tokens": 1500000, "threads": 1}'
    # the gate on 300 hard-only scenes, greedy and T = 1:
    PYTHONPATH=. .venv/bin/python bench/steer_landscape.py '{"size": "small", "sft_tokens": 1500000, "threads": 1,
        "cot": "rel", "n": 300, "tiers": "hard", "temps": [0.0, 1.0]}'

``n`` held-out scenes (default 150) ``task.sample(n, split_rng(777, "test"), "test")`` from ``tiers`` (default all
three); ``temps`` (default [1.0, 0.7]; 0.0 = greedy, one sample); ``samples`` per scene (default 4).
"""

from __future__ import annotations

import json
import sys

import numpy as np

from compute.core.reporter import ConsoleReporter
from compute.core.tasks import split_rng
from compute.steer.evaluate import rollout_eval
from compute.steer.run import _checkpoint, _setup
from compute.steer.traces import DIRECT, THINK


def main() -> None:
    p = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    temps = tuple(p.pop("temps", [1.0, 0.7]))
    n = int(p.pop("n", 150))
    tiers = p.pop("tiers", None)
    samples = int(p.pop("samples", 4))
    cfg = _setup(p)
    res = _checkpoint(cfg, ConsoleReporter(sys.stderr, data_dir="data"))
    if tiers:
        res.task.tiers = tuple(tiers.split(","))
    scenes = res.task.sample(n, split_rng(777, "test"), "test")
    tier_of = np.array([s.data["tier"] for s in scenes])
    for temp in temps:
        k_samples = 1 if temp == 0.0 else samples
        per_scene = {}
        for route in (THINK, DIRECT):
            score = np.zeros(len(scenes))
            tokens = []
            for k in range(k_samples):
                rows = rollout_eval(res.model, res.task, scenes, route, 64, temperature=temp, seed=k)
                score += np.array([r["epdms"] for r in rows]) / k_samples
                tokens += [r["tokens"] for r in rows]
            per_scene[route] = score
            rec = {
                "temperature": temp,
                "route": route,
                "samples": k_samples,
                "tokens": round(float(np.mean(tokens)), 2),
            }
            for t in (*sorted(set(tier_of)), "all"):
                sel = np.ones(len(scenes), bool) if t == "all" else tier_of == t
                rec[t] = round(float(score[sel].mean()), 4)
            print(json.dumps(rec), flush=True)
        d = per_scene[THINK] - per_scene[DIRECT]
        rec = {"temperature": temp, "route": "cot-direct (paired)"}
        for t in (*sorted(set(tier_of)), "all"):
            sel = np.ones(len(scenes), bool) if t == "all" else tier_of == t
            m = int(sel.sum())
            se = float(d[sel].std(ddof=1) / np.sqrt(m)) if m > 1 else float("nan")
            rec[t] = {"n": m, "diff": round(float(d[sel].mean()), 4), "se": round(se, 4)}
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()

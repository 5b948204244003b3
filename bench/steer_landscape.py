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
import os
import sys

from compute.core.reporter import ConsoleReporter
from compute.core.tasks import split_rng
from compute.steer.evaluate import reward_landscape
from compute.steer.run import _checkpoint, _setup


def _round(v):
    if isinstance(v, float):
        return round(v, 4)
    if isinstance(v, dict):
        return {k: _round(x) for k, x in v.items()}
    return v


def main() -> None:
    p = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    temps = tuple(p.pop("temps", [1.0, 0.7]))
    n = int(p.pop("n", 150))
    tiers = p.pop("tiers", None)
    samples = int(p.pop("samples", 4))
    cfg = _setup(p)
    res = _checkpoint(cfg, ConsoleReporter(sys.stderr, data_dir=os.environ.get("STEER_DATA_DIR", "data")))
    if tiers:
        res.task.tiers = tuple(tiers.split(","))
    scenes = res.task.sample(n, split_rng(777, "test"), "test")
    for rec in reward_landscape(res.model, res.task, scenes, temperatures=temps, n=samples):
        print(json.dumps(_round(rec)), flush=True)


if __name__ == "__main__":
    main()

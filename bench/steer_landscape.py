"""Sampled-reward landscape of an SFT checkpoint: mean EPDMS-lite of 4 sampled responses per scene with the route
forced, per hidden tier and rollout temperature (what the label-free RL signals see).

    PYTHONPATH=. .venv/bin/python bench/steer_landscape.py '{"size": "small", "sft_tokens": 1500000, "threads": 1}'

150 held-out scenes ``task.sample(150, split_rng(777, "test"), "test")``; ``temps`` (default [1.0, 0.7]).
"""

from __future__ import annotations

import json
import sys

from compute.core.reporter import ConsoleReporter
from compute.core.tasks import split_rng
from compute.steer.evaluate import reward_landscape
from compute.steer.run import _checkpoint, _setup


def main() -> None:
    p = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    temps = tuple(p.pop("temps", [1.0, 0.7]))
    cfg = _setup(p)
    res = _checkpoint(cfg, ConsoleReporter(sys.stderr, data_dir="data"))
    scenes = res.task.sample(150, split_rng(777, "test"), "test")
    for rec in reward_landscape(res.model, res.task, scenes, temperatures=temps):
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in rec.items()}), flush=True)


if __name__ == "__main__":
    main()

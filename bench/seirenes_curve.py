"""Learning curves of one or more Seirênes arms: greedy accuracy on the fixed held-out suites every few steps.

    PYTHONPATH=. python bench/seirenes_curve.py ARM[,ARM...] key=value ...

ARM is clean, static or seirenes (arms (a), (b), (c)); ``key=value`` pairs are SeirenesConfig fields, as in
bench/seirenes_measure.py (one torch thread unless ``threads=`` is given).  Each arm starts from the same cached
SFT checkpoint (``data/seirenes/``) and trains ``steps`` GRPO steps with seed ``seed``; every ``eval_every`` steps
(and at step 0) it prints one JSON line: the arm, the step, the mean train reward of the last steps, and greedy
accuracy on the clean, training-family and held-out-family suites of ``n_eval`` held-out problems.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from compute.core.reporter import MemoryReporter
from compute.core.tasks.base import split_rng
from compute.seirenes.config import SeirenesConfig
from compute.seirenes.evaluate import accuracy, suites
from compute.seirenes.run import arm_trainer
from compute.seirenes.task import load_or_build

sys.path.insert(0, str(Path(__file__).resolve().parent))
from seirenes_measure import _parse  # noqa: E402


def main() -> None:
    arms, params = sys.argv[1].split(","), _parse(sys.argv[2:])
    torch.set_num_threads(int(params["threads"]))
    cfg = SeirenesConfig.from_params(params)
    sft_model, task = load_or_build(cfg.sft(), "data", MemoryReporter(data_dir="data"))
    problems = task.sample(cfg.n_eval, split_rng(cfg.seed + 10_000, "test"), "test")
    fixed = suites(problems, cfg.seed, cfg.hint_sentences)
    for arm in arms:
        trainer = arm_trainer(cfg, sft_model, task, arm, cfg.seed)
        t0, rewards = time.time(), []
        for s in range(cfg.steps + 1):
            if s % cfg.eval_every == 0 or s == cfg.steps:
                ev = {k: accuracy(trainer.model, task, problems, h, cfg.max_new) for k, h in fixed.items()}
                row = {"arm": arm, "step": s, "train_acc": float(np.mean(rewards)) if rewards else None, **ev}
                print(json.dumps({**row, "wall": round(time.time() - t0)}), flush=True)
                rewards = []
            if s == cfg.steps:
                break
            trainer.state.step = s
            stats, _ = trainer.train_step()
            rewards.append(stats["acc/train"])


if __name__ == "__main__":
    main()

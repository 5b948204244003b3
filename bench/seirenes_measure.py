"""Seirênes measurements outside the web lab (docs/papers/seirenes.md, "Measured results").

    PYTHONPATH=. python bench/seirenes_measure.py sft  key=value ...   # build/load the SFT checkpoint, evaluate it
    PYTHONPATH=. python bench/seirenes_measure.py arms key=value ...   # arms (a)/(b)/(c) + transfer attack

``key=value`` pairs are SeirenesConfig fields (ints/floats parsed).  One torch thread unless ``threads=`` is given.
The SFT checkpoint is cached under ``data/seirenes/`` (the lab's DATA_DIR), so the lab's runs reuse it.
"""

from __future__ import annotations

import json
import sys
import time

import torch

from compute.core.reporter import MemoryReporter
from compute.core.tasks.base import split_rng
from compute.seirenes.config import SeirenesConfig
from compute.seirenes.evaluate import accuracy, adversary_suite, suites
from compute.seirenes.run import arms_run
from compute.seirenes.task import checkpoint_path, load_or_build


def _parse(args: list[str]) -> dict:
    out: dict = {"threads": 1}
    for a in args:
        k, v = a.split("=", 1)
        for cast in (int, float):
            try:
                v = cast(v)
                break
            except ValueError:
                pass
        out[k] = v
    return out


def main() -> None:
    mode, params = sys.argv[1], _parse(sys.argv[2:])
    torch.set_num_threads(int(params["threads"]))
    t0 = time.time()
    rep = MemoryReporter(data_dir="data")
    if mode == "sft":
        cfg = SeirenesConfig.from_params(params)
        model, task = load_or_build(cfg.sft(), "data", rep)
        print("checkpoint", checkpoint_path(cfg.sft(), "data").name, f"{time.time() - t0:.0f}s", flush=True)
        probs = task.sample(cfg.n_eval, split_rng(cfg.seed + 10_000, "test"), "test")
        out = {
            k: accuracy(model, task, probs, h, cfg.max_new)
            for k, h in suites(probs, cfg.seed, cfg.hint_sentences).items()
        }
        own, frac = adversary_suite(
            model, task, probs, cfg.seed, max_tokens=cfg.hint_tokens, max_sentences=cfg.hint_sentences
        )
        out["sft_adv_hinted"] = accuracy(model, task, probs, own, cfg.max_new)
        out["own_hint_valid"] = frac
        print(json.dumps(out), flush=True)
    else:
        summary = arms_run(params, rep)
        for name in ("results", "arms", "attack"):
            print(name, json.dumps(rep.tables[name]["rows"] if "rows" in rep.tables[name] else rep.tables[name]))
        print("summary", json.dumps(summary))
    print(f"wall {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()

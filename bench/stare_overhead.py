"""STARE overhead: update time of GRPO-ds vs STARE-O1 / C2 on the same batches (same process, interleaved).

Usage: .venv/bin/python bench/stare_overhead.py [--size small] [--rows 128] [--reps 5]

A random-init TinyLM samples a batch of prompts × G responses once; advantages are random group-constant ±1 values
(so selection has work to do).  For each rep, each arm restores the same weights and runs one update; the ratio of
median times is the overhead.  Also times the weight computation alone (select + ω) against the forward+backward.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.rl.trainer import GRPOConfig, GRPOTrainer
from compute.core.tasks import TaskConfig, make_task, split_rng
from compute.stare.plugin import StarePlugin, StareSettings, stare_weights


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="small")
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--max-new", type=int, default=48)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    task = make_task(TaskConfig(name="arithmetic", min_digits=2, max_digits=2))
    model = TinyLM(LMConfig.sized(args.size, task.tokenizer.vocab_size, max_len=160)).eval()
    init = copy.deepcopy(model.state_dict())
    cfg = GRPOConfig(
        prompts_per_step=args.prompts, group_size=args.group, max_new=args.max_new, eps_high=0.28, post_update_kl=False
    )
    base = GRPOTrainer(model, task, cfg, [])
    batch = base.rollout(task.sample(args.prompts, split_rng(0, "train"), "train"))
    g = torch.Generator().manual_seed(1)
    seq = (torch.randint(0, 2, (args.prompts,), generator=g).float() * 2 - 1).repeat_interleave(args.group)
    batch.rewards = seq
    batch.seq_adv = seq
    batch.adv = seq[:, None] * batch.response_mask
    base.recompute_old(batch)
    arms = {
        "grpo_ds": [],
        "stare_o1": [StarePlugin(StareSettings(target_entropy=100.0))],
        "stare_c2": [StarePlugin(StareSettings(target_entropy=100.0, variant="C2"))],
    }
    times: dict[str, list[float]] = {k: [] for k in arms}
    names = list(arms)
    for r in range(args.reps):
        for name in names[r % 3 :] + names[: r % 3]:  # rotate the order: cancels first-arm effects
            plugins = arms[name]
            model.load_state_dict(init)
            tr = GRPOTrainer(model, task, cfg, plugins)
            t = time.perf_counter()
            tr.update(batch)
            times[name].append(time.perf_counter() - t)
    wt = []
    s = -batch.old_logp
    for _ in range(args.reps * 4):
        t = time.perf_counter()
        stare_weights(s, batch.adv, batch.response_mask, 0.1, 1.1, 0.9, "C2")
        wt.append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    n_tok = int(batch.response_mask.sum())
    print(f"size={args.size} rows={len(batch)} valid tokens={n_tok} reps={args.reps}")
    print(f"{'arm':10s} {'update median (ms)':>20s} {'ratio to grpo_ds':>18s}")
    for k, v in med.items():
        print(f"{k:10s} {1e3 * v:20.1f} {v / med['grpo_ds']:18.3f}")
    w = statistics.median(wt)
    print(f"stare_weights (C2) alone: {1e3 * w:.2f} ms = {w / med['grpo_ds']:.3%} of a GRPO-ds update")


if __name__ == "__main__":
    main()

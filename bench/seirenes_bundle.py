"""Cost of one Seirênes step (R1 + R2 + R3, two dependent phases) vs one GRPO-clean step with the same number of
Reasoner sequences, same model, same process (ratios cancel CPU contention).

    PYTHONPATH=. .venv/bin/python bench/seirenes_bundle.py [size] [steps]
"""

from __future__ import annotations

import sys
import time

import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.rl.trainer import GRPOConfig, GRPOTrainer
from compute.seirenes.plugin import Seirenes, SelfPlayConfig
from compute.seirenes.task import SeirenesSFTConfig, make_task


def main(size: str = "micro", steps: int = 2) -> None:
    torch.set_num_threads(2)
    task = make_task(SeirenesSFTConfig())
    cfg = GRPOConfig(
        steps=steps, prompts_per_step=8, group_size=6, max_new=40, eval_every=0, record_every=0, post_update_kl=False
    )
    times = {}
    for mode in ("clean", "static", "seirenes"):
        torch.manual_seed(0)
        model = TinyLM(LMConfig.sized(size, task.tokenizer.vocab_size, max_len=192))
        tr = GRPOTrainer(model, task, cfg, [Seirenes(SelfPlayConfig(mode=mode))])
        t = time.perf_counter()
        n_seq = 0
        for s in range(steps):
            tr.state.step = s
            _, batch = tr.train_step()
            n_seq += len(batch)
        times[mode] = ((time.perf_counter() - t) / steps, n_seq / steps)
    base = times["clean"][0]
    print(f"size={size} steps={steps} Q=8 G=6 K=4 G_h=4")
    print(f"{'arm':10s} {'s/step':>8s} {'seq/step':>9s} {'ratio vs clean':>15s}")
    for mode, (sec, n) in times.items():
        print(f"{mode:10s} {sec:8.2f} {n:9.0f} {sec / base:15.2f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "micro", int(sys.argv[2]) if len(sys.argv) > 2 else 2)

"""RL steps/s and the phase breakdown (rollout+reward, old_logp, update) per model size, in one process.

A freshly initialised model on arithmetic never emits EOS, so every response has max_new tokens: the worst case.
Usage: .venv/bin/python bench/grpo_core_rl_step.py [--sizes micro small] [--steps 2] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from compute.core.lm.model import LMConfig, TinyLM  # noqa: E402
from compute.core.rl.trainer import GRPOConfig, GRPOTrainer  # noqa: E402
from compute.core.tasks import TaskConfig, make_task  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="+", default=["micro", "small"])
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--max-new", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    task = make_task(TaskConfig())
    print(f"{a.prompts}×{a.group} rollouts × {a.max_new} tokens per step, threads={a.threads}")
    print(
        f"{'size':>7} {'params':>8} {'s/step':>8} {'steps/s':>8} {'rollout':>8} {'old_logp':>9} "
        f"{'update':>8} {'tok/s':>7}"
    )
    base = None
    for size in a.sizes:
        torch.manual_seed(0)
        model = TinyLM(LMConfig.sized(size, task.tokenizer.vocab_size, max_len=192))
        cfg = GRPOConfig(
            prompts_per_step=a.prompts,
            group_size=a.group,
            max_new=a.max_new,
            n_eval=8,
            eval_every=0,
            record_every=0,
            post_update_kl=False,
        )
        tr = GRPOTrainer(model, task, cfg)
        times = {"time/rollout_reward": 0.0, "time/old_logp": 0.0, "time/update": 0.0}
        t0 = time.perf_counter()
        tok = 0.0
        for s in range(a.steps):
            tr.state.step = s
            st, batch = tr.train_step()
            tok += float(batch.lengths.sum())
            for k in times:
                times[k] += st.get(k, 0.0)
        dt = (time.perf_counter() - t0) / a.steps
        base = base or dt
        print(
            f"{size:>7} {model.n_params() / 1e6:>7.2f}M {dt:>8.2f} {1 / dt:>8.3f} "
            f"{times['time/rollout_reward'] / a.steps:>8.2f} {times['time/old_logp'] / a.steps:>9.2f} "
            f"{times['time/update'] / a.steps:>8.2f} {tok / max(1e-9, times['time/rollout_reward']):>7.0f}"
            f"   ({dt / base:.1f}× the {a.sizes[0]} step)"
        )


if __name__ == "__main__":
    main()

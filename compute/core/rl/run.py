"""Entry points of the grpo_core demo app: SFT build, plain GRPO run, sampling benchmark.

Each takes ``(params, reporter)`` as in docs/paper-app-contract.md.  ``params`` mirror ``CoreRunConfig``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.lm.sampling import generate
from compute.core.lm.sft import SFTConfig, greedy_accuracy, load_or_build, sampled_accuracy
from compute.core.rl.config import CheckpointFields
from compute.core.rl.plugins import Plugin
from compute.core.rl.trainer import GRPOConfig, GRPOTrainer
from compute.core.runtime import resolve_device, seed_everything
from compute.core.tasks import split_rng


@dataclass
class CoreRunConfig(CheckpointFields):
    """The declared parameters of the grpo_core experiments (SFT build + GRPO run share the SFT fields)."""

    # GRPO
    estimator: str = "grpo"
    loss_agg: str = "token-mean"
    eps_low: float = 0.2
    eps_high: float = 0.2
    dual_clip: float = 10.0
    dynamic_sampling: bool = False
    overlong_cache: int = 0
    kl_coef: float = 0.0
    steps: int = 100
    prompts_per_step: int = 16
    group_size: int = 8
    lr: float = 3e-5  # 1e-4 degraded held-out accuracy on the small model (docs/papers/grpo_core.md)
    ppo_epochs: int = 1  # updates per rollout batch = ppo_epochs × mini_batches (1 × 1: one on-policy step)
    mini_batches: int = 1
    eval_every: int = 10
    n_eval: int = 200
    n_eval_final: int = 500

    def sft(self, n_val: int | None = None, seed: int | None = None) -> SFTConfig:
        return super().sft(self.n_eval if n_val is None else n_val, self.seed if seed is None else seed)

    def grpo(self) -> GRPOConfig:
        return GRPOConfig(
            steps=self.steps,
            prompts_per_step=self.prompts_per_step,
            group_size=self.group_size,
            max_new=self.max_new,
            estimator=self.estimator,
            loss_agg=self.loss_agg,
            eps_low=self.eps_low,
            eps_high=self.eps_high,
            dual_clip=self.dual_clip,
            lr=self.lr,
            ppo_epochs=self.ppo_epochs,
            mini_batches=self.mini_batches,
            kl_coef=self.kl_coef,
            dynamic_sampling=self.dynamic_sampling,
            overlong_cache=self.overlong_cache,
            eval_every=self.eval_every,
            n_eval=self.n_eval,
            seed=self.seed,
        )


def _setup(params: dict[str, Any]) -> CoreRunConfig:
    cfg = CoreRunConfig.from_params(params)
    cfg.device = resolve_device(cfg.device)
    if "threads" in params:  # otherwise the runner's setting (the declaration's ``threads``) stands
        torch.set_num_threads(max(1, int(params["threads"])))
    seed_everything(cfg.seed)
    return cfg


def sft_build(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """Build (or reuse) the SFT warm-up checkpoint; streams sft/train_loss, sft/val_loss, sft/val_accuracy."""
    cfg = _setup(params)
    res = load_or_build(cfg.sft(), reporter.data_dir, reporter, cfg.device, force=bool(params.get("rebuild", False)))
    meta = dict(res.meta)
    if res.cached:  # still stream the stored numbers so the dashboard has them
        reporter.scalars(meta["tokens"], {"sft/val_loss": meta["val_loss"], "sft/val_accuracy": meta["val_accuracy"]})
    reporter.table("summary", [{"checkpoint": res.path.name, "cached": res.cached, **meta}])
    reporter.progress(1.0, f"SFT checkpoint ready ({'cache hit' if res.cached else 'built'})")
    return {
        "checkpoint": res.path.name,
        "cached": res.cached,
        **{k: meta[k] for k in ("val_loss", "val_accuracy", "tokens")},
    }


def grpo_run(params: dict[str, Any], reporter: Any, plugins: list[Plugin] | None = None) -> dict[str, Any]:
    """Plain GRPO (or Dr. GRPO / RLOO / DAPO options) from the cached SFT checkpoint.

    Held-out greedy accuracy and sampled accuracy (mean pass@1 at T = 1, 4 samples per problem) of the SFT
    checkpoint and of the final policy on ``n_eval_final`` test problems, with each difference in binomial
    standard errors, SE = sqrt(p0(1−p0)/n + p1(1−p1)/n) with n the number of problems.
    """
    cfg = _setup(params)
    sft_cfg = cfg.sft()
    if plugins:
        from dataclasses import replace

        sft_cfg = replace(sft_cfg, extra_tokens=tuple(t for p in plugins for t in p.extra_tokens))
    res = load_or_build(sft_cfg, reporter.data_dir, reporter, cfg.device)
    reporter.log(f"SFT checkpoint {res.path.name} ({'cache hit' if res.cached else 'built now'})")
    final_problems = res.task.sample(cfg.n_eval_final, split_rng(cfg.seed + 10_000, "test"), "test")
    acc0 = greedy_accuracy(res.model, res.task, final_problems, cfg.max_new)
    s0 = sampled_accuracy(res.model, res.task, final_problems, 4, cfg.max_new, seed=cfg.seed + 1)
    trainer = GRPOTrainer(res.model, res.task, cfg.grpo(), plugins)
    reporter.scalars(0, trainer.evaluate())  # step 0 = the SFT checkpoint, on the same held-out set as later evals
    t0 = time.perf_counter()
    history = trainer.train(reporter)
    seconds = time.perf_counter() - t0
    acc1 = greedy_accuracy(trainer.model, res.task, final_problems, cfg.max_new)
    s1 = sampled_accuracy(trainer.model, res.task, final_problems, 4, cfg.max_new, seed=cfg.seed + 1)
    n = len(final_problems)

    def se(a: float, b: float) -> float:  # conservative: n problems (the 4 samples per problem are not independent)
        return math.sqrt(max(a * (1 - a) + b * (1 - b), 1e-12) / n)

    summary = {
        "sft_heldout_acc": acc0,
        "grpo_heldout_acc": acc1,
        "gain": acc1 - acc0,
        "gain_in_se": (acc1 - acc0) / se(acc0, acc1),
        "sft_heldout_pass1_T1": s0,
        "grpo_heldout_pass1_T1": s1,
        "pass1_gain_in_se": (s1 - s0) / se(s0, s1),
        "n_eval_final": n,
        "steps": len(history),
        "seconds_per_step": seconds / max(1, len(history)),
        "final_entropy": history[-1].get("entropy/mean", float("nan")) if history else float("nan"),
    }
    reporter.table("summary", [summary])
    return summary


def _time_generate(model: TinyLM, batch: int, new: int, use_cache: bool, prompt_len: int = 8) -> float:
    prompts = [[1] + [3 + (i + j) % 20 for j in range(prompt_len - 1)] for i in range(batch)]
    t = time.perf_counter()
    generate(model, prompts, max_new=new, eos_id=-1, use_cache=use_cache, generator=torch.Generator().manual_seed(0))
    return time.perf_counter() - t


def sampling_benchmark(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """Tokens/s of sampling with vs without the KV cache (same model, same process: ratios cancel contention)."""
    cfg = _setup(params)
    torch.manual_seed(cfg.seed)
    model = TinyLM(LMConfig.sized(cfg.size, 36, max_len=320)).eval()
    rows = []
    batches = params.get("batches") or [cfg.prompts_per_step * cfg.group_size]
    lengths = params.get("lengths") or [cfg.max_new]
    k, total = 0, len(batches) * len(lengths)
    for b in batches:
        for n in lengths:
            tc = _time_generate(model, b, n, True)
            tn = _time_generate(model, b, n, False)
            rows.append(
                {
                    "batch": b,
                    "new_tokens": n,
                    "cache_tok_s": b * n / tc,
                    "recompute_tok_s": b * n / tn,
                    "speedup": tn / tc,
                }
            )
            k += 1
            reporter.scalar("bench/speedup", k, tn / tc)
            reporter.progress(k / total, f"B={b}, {n} tokens: ×{tn / tc:.1f}")
    reporter.table("sampling", rows)
    return {"max_speedup": max(r["speedup"] for r in rows), "min_speedup": min(r["speedup"] for r in rows)}

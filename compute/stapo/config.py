"""The declared parameters of the STAPO experiments (one dataclass; spec stapo §3)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from compute.core.lm.sft import SFTConfig
from compute.core.rl.trainer import GRPOConfig
from compute.core.tasks import TaskConfig

ARM_LABELS = {
    "grpo": "GRPO",
    "justrl": "JustRL",
    "entropy20": "20-Entropy",
    "stapo": "STAPO",
    "random_mask": "random mask",
    "inverted_entropy": "inverted entropy",
    "no_renorm": "no renorm",
}


@dataclass
class StapoConfig:
    """Task + SFT checkpoint (shared with grpo_core's cache), RL budget, S2T thresholds, evaluation."""

    arm: str = "stapo"
    arms: str = "stapo,justrl,entropy20,grpo"  # comparison only
    n_seeds: int = 1  # comparison only
    # task and SFT checkpoint (the grpo_core defaults, so the cached checkpoint is shared)
    task: str = "arithmetic"
    min_digits: int = 2
    max_digits: int = 2
    size: str = "small"
    sft_tokens: int = 600_000
    sft_lr: float = 2e-3
    # RL
    steps: int = 100
    prompts_per_step: int = 16
    group_size: int = 8
    mini_batches: int = 4
    lr: float = 1e-4
    warmup_steps: int = 10
    max_new: int = 64
    # S2T
    tau_p: float = 0.01
    q: float = 0.75
    grad_every: int = 5
    # evaluation
    eval_every: int = 10
    n_eval: int = 128
    n_eval_final: int = 300
    threads: int = 2
    seed: int = 0
    device: str = "cpu"

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> StapoConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in names})

    def sft(self) -> SFTConfig:
        """Same fields as ``CoreRunConfig.sft`` so the checkpoint hash (and the cache file) is shared."""
        return SFTConfig(
            task=TaskConfig(name=self.task, min_digits=self.min_digits, max_digits=self.max_digits),
            size=self.size,
            tokens=self.sft_tokens,
            lr=self.sft_lr,
            max_new=self.max_new,
            n_val=200,
            seed=0,
        )

    def grpo(self, arm: str, seed: int) -> GRPOConfig:
        """GRPO: sequence-mean loss, symmetric clip 0.2.  Every other arm: JustRL/DAPO base — token-mean loss
        (1/Σ|o_i|), clip [0.8, 1.28], no KL, no entropy bonus.  Dynamic sampling off for all (fairness)."""
        base = arm != "grpo"
        return GRPOConfig(
            steps=self.steps,
            prompts_per_step=self.prompts_per_step,
            group_size=self.group_size,
            max_new=self.max_new,
            estimator="grpo",
            loss_agg="token-mean" if base else "seq-mean-token-mean",
            eps_low=0.2,
            eps_high=0.28 if base else 0.2,
            lr=self.lr,
            grad_clip=1.0,
            mini_batches=self.mini_batches,
            kl_coef=0.0,
            dynamic_sampling=False,
            eval_every=self.eval_every,
            n_eval=self.n_eval,
            seed=seed,
        )

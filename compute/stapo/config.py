"""The declared parameters of the STAPO experiments (one dataclass; spec stapo §3)."""

from __future__ import annotations

from dataclasses import dataclass

from compute.core.rl.config import CheckpointFields
from compute.core.rl.trainer import GRPOConfig

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
class StapoConfig(CheckpointFields):
    """Task + SFT checkpoint (the grpo_core fields and defaults, so the cached checkpoint is shared), RL budget,
    S2T thresholds, evaluation.  ``sft()`` is the base's with n_val=200, seed=0, as grpo_core's defaults."""

    arm: str = "stapo"
    arms: str = "stapo,justrl,entropy20,grpo"  # comparison only
    n_seeds: int = 1  # comparison only
    # RL
    steps: int = 100
    prompts_per_step: int = 16
    group_size: int = 8
    mini_batches: int = 4
    lr: float = 1e-4
    warmup_steps: int = 10
    # S2T
    tau_p: float = 0.01
    q: float = 0.75
    grad_every: int = 5
    # evaluation
    eval_every: int = 10
    n_eval: int = 128
    n_eval_final: int = 300

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

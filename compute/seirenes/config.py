"""One config dataclass for the Seirênes experiments (self-play run, arm comparison + transfer attack)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any

from compute.core.rl.trainer import GRPOConfig
from compute.seirenes.plugin import SelfPlayConfig
from compute.seirenes.task import SeirenesSFTConfig


@dataclass
class SeirenesConfig:
    """Declared parameters (spec §3).  ``arms`` is a comma list of clean, static, seirenes, frozen_adv."""

    size: str = "small"
    sft_tokens: int = 1_500_000
    sft_lr: float = 2e-3
    sft_p_hinted: float = 0.25  # share of SFT examples solved under a random training-family hint (spec: 0.25)
    min_ops: int = 2
    max_ops: int = 3
    steps: int = 30
    questions: int = 8
    n_clean: int = 6
    n_hints: int = 4
    n_per_hint: int = 4
    hint_tokens: int = 24
    hint_sentences: int = 1  # compound hints: 1…S training-family sentences (richer distractor space)
    sft_compound_solves: bool = False  # SFT solves under compound hints too (default: single-sentence, the spec's)
    adv_share: float = 1 / 3  # the Adversary's share of the token weight; clean and hinted split the rest equally
    c_inv: float = 0.1
    variant: str = "clipped"
    drop_counts_format_fail: bool = True
    adv_sees_answer: bool = False
    temperature: float = 1.0
    lr: float = 3e-5
    max_new: int = 40
    eval_every: int = 10
    n_eval: int = 200
    arms: str = "clean,static,seirenes"
    n_seeds: int = 1
    threads: int = 2
    seed: int = 0

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> SeirenesConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in names})

    def sft(self) -> SeirenesSFTConfig:
        return SeirenesSFTConfig(
            size=self.size,
            tokens=self.sft_tokens,
            lr=self.sft_lr,
            p_hinted=self.sft_p_hinted,
            min_ops=self.min_ops,
            max_ops=self.max_ops,
            adv_sees_answer=self.adv_sees_answer,
            hint_sentences=self.hint_sentences,
            compound_solves=bool(self.sft_compound_solves),  # "1" from a command line hashes as True
        )

    def selfplay(self, mode: str) -> SelfPlayConfig:
        return SelfPlayConfig(
            mode=mode,
            G=self.n_clean,
            K=self.n_hints,
            G_h=self.n_per_hint,
            max_hint_tokens=self.hint_tokens,
            max_sentences=self.hint_sentences,
            c_inv=self.c_inv,
            variant=self.variant,
            drop_counts_format_fail=self.drop_counts_format_fail,
            shares=self.shares(),
        )

    def shares(self) -> tuple[float, float, float]:
        """Token-weight shares (clean, hinted, adv); 1/3 keeps the exact equal split of the spec."""
        a = Fraction(float(self.adv_share)).limit_denominator(10**6)  # 1/3 stays 1/3, so the split is exact
        if not 0 < a < 1:
            raise ValueError(f"adv_share must lie in (0, 1), got {float(a)}")
        return (float((1 - a) / 2), float((1 - a) / 2), float(a))

    def grpo(self, seed: int) -> GRPOConfig:
        return GRPOConfig(
            steps=self.steps,
            prompts_per_step=self.questions,
            group_size=self.n_clean,
            max_new=self.max_new,
            temperature=self.temperature,
            lr=self.lr,
            eval_every=0,
            n_eval=8,
            record_every=0,
            post_update_kl=False,
            seed=seed,
        )

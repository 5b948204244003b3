"""The declared parameters of the STARE experiments (one dataclass for the family, spec stare §3)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from compute.core.rl.run import CoreRunConfig
from compute.core.rl.trainer import GRPOConfig
from compute.stare.plugin import StareSettings

METHODS = ("grpo", "grpo_ds", "dapo", "stare_o1", "stare_c2", "clip_cov", "kl_cov")


@dataclass
class StareRunConfig(CoreRunConfig):
    """Core run fields (task, SFT checkpoint, budget) + the method and STARE's knobs."""

    method: str = "stare_o1"
    dynamic_sampling: bool = True  # for every method but plain GRPO (off only for smoke tests)
    frac: float = 0.1  # P
    w_pos: float = 1.1  # W
    m_neg: float = 0.9  # M
    kappa: float = 0.5  # H_tgt = κ · H̄_SFT
    target_entropy: float = 0.0  # > 0: fixed H_tgt in nats
    gated: bool = True
    adaptive: bool = False
    alpha: float = 0.01
    w_max: float = 1.5
    m_min: float = 0.5
    cov_ratio: float = 2e-4  # Clip-Cov / KL-Cov token share
    analysis_every: int = 0  # measured-vs-predicted ΔH every k steps (0: off)
    passk_problems: int = 0
    methods: str = "core"  # comparison: which methods
    n_seeds: int = 1

    def settings(self) -> StareSettings:
        return StareSettings(
            variant="C2" if self.method == "stare_c2" else "O1",
            frac=self.frac,
            w_pos=self.w_pos,
            m_neg=self.m_neg,
            target_entropy=self.target_entropy,
            kappa=self.kappa,
            gated=self.gated,
            adaptive=self.adaptive,
            alpha=self.alpha,
            w_max=self.w_max,
            m_min=self.m_min,
            active=self.method in ("stare_o1", "stare_c2"),
        )

    def method_grpo(self) -> GRPOConfig:
        """The base objective of each method (spec stare §2 "Baselines").

        grpo: symmetric clip 0.2, no dynamic sampling; grpo_ds (and STARE, Clip-Cov, KL-Cov on top of it): clip-higher
        ε = (0.2, 0.28), dual clip 10, dynamic sampling, token-mean; dapo: grpo_ds + overlong shaping with
        L_c = max_new/4.
        """
        g = replace(self.grpo(), passk_problems=self.passk_problems, passk_n=8, passk_k=8)
        if self.method == "grpo":
            return replace(g, eps_low=0.2, eps_high=0.2, dynamic_sampling=False, overlong_cache=0)
        g = replace(
            g,
            eps_low=0.2,
            eps_high=0.28,
            dynamic_sampling=self.dynamic_sampling,
            overlong_cache=0,
            loss_agg="token-mean",
        )
        if self.method == "dapo":
            g = replace(g, overlong_cache=max(1, self.max_new // 4))
        return g

"""The declared parameters of the STEER experiments (one dataclass, spec steer §3)."""

from __future__ import annotations

from dataclasses import dataclass

from compute.core.rl.config import CheckpointFields
from compute.core.rl.trainer import GRPOConfig
from compute.steer.plugin import SteerPlugin
from compute.steer.sft import SteerSFTConfig

METHOD_LABELS = {
    "steer": "STEER",
    "always_cot": "always-CoT",
    "never_cot": "never-CoT",
    "grpo": "GRPO over both routes",
    "length_penalty": "GRPO + length penalty",
    "adathink": "AdaThink-style",
    "label_router": "label-supervised router",
}


@dataclass
class SteerConfig(CheckpointFields):
    """Checkpoint (the core's shared fields, driving defaults), RL budget, routing knobs, evaluation."""

    task: str = "driving"
    size: str = "tiny"
    sft_tokens: int = 1_500_000
    sft_lr: float = 3e-3
    p_cot: float = 0.8  # CoT share of the SFT traces (the over-reasoning start)
    n_pool: int = 4000  # SFT scenes
    cot: str = "lanes"  # CoT trace style: "lanes" (per-lane gap/TTC) or "rel" (relative tracks + lane values)
    scenes: str = "v1"  # scene set: "v1", or "v2" (cut-ins with merge traffic; scenes.py)
    max_new: int = 64
    # method
    method: str = "steer"
    lam: float = 1e-3  # cost per generated token in Δ (and the length penalty)
    beta: float = 0.5
    rollout: str = "uncertainty"
    m_min: int = 0
    route_is: bool = False
    metric: str = "epdms"  # reward: EPDMS-lite or PDMS
    oracle_tiers: str = "hard"  # tiers the label-supervised router sends to <think>
    route_weight: float = 1.0  # ω on the route token (every method alike)
    cot_weight: float = 1.0  # κ on the content tokens of <think> rows (every method alike)
    cot_aux: int = 0  # extra forced-<think> rollouts per scene, content-only (design; 0 = off)
    route_detach: bool = False  # the route term on stop-gradient trunk features (design; off)
    route_head_lr: float = 0.0  # > 0: a separate route head with its own Adam at this lr (design; 0 = off)
    # RL
    steps: int = 60
    prompts_per_step: int = 16
    group_size: int = 8
    lr: float = 2e-4
    temperature: float = 1.0
    # evaluation
    eval_every: int = 10
    n_eval: int = 120
    n_eval_final: int = 300
    # pareto / bench
    methods: str = "steer,length_penalty"
    lams: str = "0.001,0.004"
    n_seeds: int = 1

    def sft_config(self) -> SteerSFTConfig:
        return SteerSFTConfig(
            size=self.size,
            tokens=self.sft_tokens,
            lr=self.sft_lr,
            p_cot=self.p_cot,
            n_pool=self.n_pool,
            seed=0,
            cot=self.cot,
            scenes=self.scenes,
        )

    def grpo(self, seed: int | None = None) -> GRPOConfig:
        return GRPOConfig(
            steps=self.steps,
            prompts_per_step=self.prompts_per_step,
            group_size=self.group_size,
            max_new=self.max_new,
            temperature=self.temperature,
            estimator="grpo",
            loss_agg="token-mean",
            lr=self.lr,
            eval_every=self.eval_every,
            n_eval=self.n_eval,
            record_every=0,
            post_update_kl=False,
            seed=self.seed if seed is None else seed,
        )

    def plugin(self, method: str | None = None, lam: float | None = None) -> SteerPlugin:
        return SteerPlugin(
            method=method or self.method,
            lam=self.lam if lam is None else lam,
            beta=self.beta,
            rollout=self.rollout,
            m_min=self.m_min,
            route_is=self.route_is,
            oracle_tiers=tuple(t.strip() for t in self.oracle_tiers.split(",") if t.strip()),
            route_weight=self.route_weight,
            cot_weight=self.cot_weight,
            cot_aux=self.cot_aux,
            route_detach=self.route_detach,
        )

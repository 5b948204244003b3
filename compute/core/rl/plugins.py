"""The plug-in API of the GRPO core (spec grpo_core §2 "Hooks").  A paper's method is a ``Plugin`` subclass.

Hooks (all optional; the trainer chains plug-ins in list order):

=================  ================================================  =========================================
hook               signature                                         chaining
=================  ================================================  =========================================
plan_rollouts      (specs, state) → specs                            each gets the previous one's specs; called
                                                                     once per phase (state.phase = 0, 1, …)
                                                                     until the chain returns no specs
assign_rewards     (batch, rewards [N], state) → rewards [N]         piped
advantages         (batch, adv [N, R], state) → adv [N, R]           piped (per-token advantages)
token_weights      (ctx) → TokenWeights(weight, mask, stats) | None  weights multiply, masks AND, stats merge
extra_loss         (ctx) → scalar tensor | None                      summed
on_step_end        (stats, state) → dict | None                      returned dicts merge into the step stats
=================  ================================================  =========================================

``extra_tokens`` lists role tokens a plug-in needs in the vocabulary; pass them to the SFT build.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import torch

from compute.core.tasks.base import Problem


@dataclass
class RolloutSpec:
    """Ask the trainer for ``n`` responses to ``prompt``; responses sharing ``group_key`` form one group."""

    prompt: list[int]
    n: int
    problem: Problem
    group_key: Hashable
    role: str = "solve"
    force_prefix: list[int] | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class TokenWeights:
    """What ``token_weights`` returns: ω [B, T] (None ≡ 1), a {0,1} mask [B, T] (None ≡ 1) and scalar stats."""

    weight: torch.Tensor | None = None
    mask: torch.Tensor | None = None
    stats: dict[str, float] = field(default_factory=dict)


@dataclass
class LossContext:
    """Everything a loss-time hook may read, for the rows of one mini-batch (all [B, T] unless noted).

    ``logp`` and ``entropy`` carry gradients (detach them for weights); ``surprisal`` = −logp detached;
    ``adv`` per-token advantages; ``mask`` the response mask; ``ratio`` = exp(logp − old_logp) detached;
    ``groups`` [B], ``roles`` (list), ``rewards`` [B]; ``batch`` the RolloutBatch slice; ``state`` the trainer
    state (step, config, model, task…).
    """

    logp: torch.Tensor
    old_logp: torch.Tensor
    entropy: torch.Tensor
    surprisal: torch.Tensor
    adv: torch.Tensor
    mask: torch.Tensor
    ratio: torch.Tensor
    groups: torch.Tensor
    roles: list[str]
    rewards: torch.Tensor
    step: int
    batch: Any = None
    state: Any = None


class Plugin:
    """Base class: every hook is the identity.  Override the ones a method needs."""

    name = "plugin"
    extra_tokens: tuple[str, ...] = ()

    def plan_rollouts(self, specs: list[RolloutSpec], state: Any) -> list[RolloutSpec]:
        return specs

    def assign_rewards(self, batch: Any, rewards: torch.Tensor, state: Any) -> torch.Tensor:
        return rewards

    def advantages(self, batch: Any, adv: torch.Tensor, state: Any) -> torch.Tensor:
        return adv

    def token_weights(self, ctx: LossContext) -> TokenWeights | None:
        return None

    def extra_loss(self, ctx: LossContext) -> torch.Tensor | None:
        return None

    def on_step_end(self, stats: dict[str, float], state: Any) -> dict[str, float] | None:
        return None


class PluginChain:
    """Runs a list of plug-ins in order with the chaining rules of the module docstring."""

    def __init__(self, plugins: list[Plugin] | None = None) -> None:
        self.plugins = list(plugins or [])

    @property
    def extra_tokens(self) -> tuple[str, ...]:
        out: list[str] = []
        for p in self.plugins:
            out += [t for t in p.extra_tokens if t not in out]
        return tuple(out)

    def plan_rollouts(self, specs: list[RolloutSpec], state: Any) -> list[RolloutSpec]:
        for p in self.plugins:
            specs = p.plan_rollouts(specs, state)
        return specs

    def assign_rewards(self, batch: Any, rewards: torch.Tensor, state: Any) -> torch.Tensor:
        for p in self.plugins:
            rewards = p.assign_rewards(batch, rewards, state)
        return rewards

    def advantages(self, batch: Any, adv: torch.Tensor, state: Any) -> torch.Tensor:
        for p in self.plugins:
            adv = p.advantages(batch, adv, state)
        return adv

    def token_weights(self, ctx: LossContext) -> TokenWeights:
        """ω = Π ω_k (None ≡ 1), mask = ∧ mask_k (None ≡ 1), stats merged (later plug-ins win on a clash)."""
        out = TokenWeights()
        for p in self.plugins:
            tw = p.token_weights(ctx)
            if tw is None:
                continue
            if tw.weight is not None:
                out.weight = tw.weight.detach() if out.weight is None else out.weight * tw.weight.detach()
            if tw.mask is not None:
                m = tw.mask.detach().bool()
                out.mask = m if out.mask is None else (out.mask & m)
            out.stats.update(tw.stats)
        return out

    def extra_loss(self, ctx: LossContext) -> torch.Tensor | None:
        total = None
        for p in self.plugins:
            x = p.extra_loss(ctx)
            if x is not None:
                total = x if total is None else total + x
        return total

    def on_step_end(self, stats: dict[str, float], state: Any) -> dict[str, float]:
        extra: dict[str, float] = {}
        for p in self.plugins:
            d = p.on_step_end({**stats, **extra}, state)
            if d:
                extra.update(d)
        return extra

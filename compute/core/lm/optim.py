"""A minimal AdamW (Loshchilov & Hutter 2019) with torch.optim.AdamW's update rule.

Why not ``torch.optim.AdamW``: its constructor imports ``torch._dynamo`` (5–25 s per process on a shared 2-core
VM), which would dominate every test and every short run.  Update, with bias-corrected moments:

    θ ← θ − lr·λ·θ;   m ← β1 m + (1 − β1) g;   v ← β2 v + (1 − β2) g²
    θ ← θ − lr · (m / (1 − β1^t)) / (sqrt(v / (1 − β2^t)) + ε)
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


class AdamW:
    """``param_groups[0]["lr"]`` may be changed between steps (schedules), as with torch optimizers."""

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.param_groups = [{"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}]
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        g0 = self.param_groups[0]
        lr, (b1, b2), eps, wd = g0["lr"], g0["betas"], g0["eps"], g0["weight_decay"]
        self.t += 1
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v, strict=True):
            if p.grad is None:
                continue
            if wd:
                p.mul_(1 - lr * wd)
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            p.addcdiv_(m / c1, (v / c2).sqrt_().add_(eps), value=-lr)

"""The replay protocol and the one SAE training loop every arm shares.

Budget T training tokens, unique pool U, replay factor R = T/U (spec §2 "Replay protocol"):
    fresh            R = 1, every row new (synthetic: drawn from the generator; cache: each row used once)
    replay           a pool of U rows reshuffled every epoch; every row is seen exactly R times
    small-but-fresh  only U tokens, once (separates uniqueness from compute)
T, the batch size, the per-step LR schedule and the target L0 are identical across the fresh and replay arms.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from compute.sae_replay.sae import SAE, lr_at


def replay_order(U: int, R: int, gen: torch.Generator) -> torch.Tensor:
    """Row indices for R epochs over a pool of U rows, each epoch a fresh permutation: length U·R."""
    return torch.cat([torch.randperm(U, generator=gen) for _ in range(R)])


class PoolSource:
    """Serves batches from a stored pool in replay order (epochs concatenated, so batches may straddle epochs)."""

    def __init__(self, pool: torch.Tensor, R: int, seed: int) -> None:
        self.pool, self.R = pool, R
        self.order = replay_order(pool.shape[0], R, torch.Generator().manual_seed(seed))
        self.pos = 0
        self.counts = torch.zeros(pool.shape[0], dtype=torch.long)  # how often each row was served

    def next(self, n: int) -> torch.Tensor:
        idx = self.order[self.pos : self.pos + n]
        if idx.numel() < n:
            raise RuntimeError("replay pool exhausted: T must equal U·R")
        self.pos += n
        self.counts.index_add_(0, idx, torch.ones_like(idx))
        return self.pool[idx]


@dataclass
class TrainSpec:
    """Hyper-parameters of one SAE training run (identical across arms of a sweep)."""

    d: int
    m: int = 512
    arch: str = "topk"
    k: int = 8
    batch: int = 1024
    lr: float = 5e-4  # Adam, betas (0.9, 0.999) — design choice (spec)
    l0_coeff: float = 0.0  # JumpReLU λ
    aux_coeff: float = 1 / 32  # AuxK coefficient (Gao et al. 2024)
    n_dead_tokens: int = 1 << 14  # a latent is dead after this many tokens without firing (scaled-down 10⁶)
    jump_eps: float = 1e-3
    theta_init: float = 1e-3
    theta_quantile_init: bool = False  # JumpReLU option: θ_j starts at the (1 − k/m) quantile of p_j (first batch)
    init_seed: int = 0  # same SAE initialization for every arm


def make_sae(spec: TrainSpec, mean: torch.Tensor) -> SAE:
    g = torch.Generator().manual_seed(spec.init_seed)
    sae = SAE(spec.d, spec.m, spec.arch, spec.k, jump_eps=spec.jump_eps, theta_init=spec.theta_init, generator=g)
    with torch.no_grad():
        sae.b_dec.copy_(mean)  # b_dec starts at the data mean
    return sae


def train_sae(
    spec: TrainSpec,
    next_batch: Callable[[int], torch.Tensor],
    n_tokens: int,
    mean: torch.Tensor,
    on_eval: Callable[[int, SAE], None] | None = None,
    n_evals: int = 8,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[SAE, dict[str, float]]:
    """Train one SAE on ``n_tokens`` rows served by ``next_batch(B)``; returns the SAE and its last train stats.

    Each step: loss.backward(); remove the gradient component parallel to each decoder column; Adam step with the
    per-step LR (warm-up 1 %, linear decay over the last 20 %); renormalize decoder columns.
    """
    sae = make_sae(spec, mean)
    opt = torch.optim.Adam(sae.parameters(), lr=spec.lr, betas=(0.9, 0.999))
    n_steps = max(1, n_tokens // spec.batch)
    since_fired = torch.zeros(spec.m, dtype=torch.long)  # tokens since each latent last fired
    eval_at = {int(round(n_steps * (i + 1) / n_evals)) - 1 for i in range(n_evals)} if on_eval else set()
    stats: dict[str, float] = {}
    for s in range(n_steps):
        x = next_batch(spec.batch)
        if s == 0 and spec.arch == "jumprelu" and spec.theta_quantile_init:
            # option (off by default): start every latent firing at rate ≈ k/m instead of θ = 10⁻³.  Tried for
            # short budgets; in our runs most latents then die (L0 → 0.4) because ε-kernel θ-updates are too rare
            with torch.no_grad():
                q = torch.quantile(sae.pre(x), 1.0 - spec.k / spec.m, dim=0)
                sae.theta.copy_(q.clamp_min(spec.theta_init))
        dead = since_fired > spec.n_dead_tokens
        for gr in opt.param_groups:
            gr["lr"] = lr_at(s, n_steps, spec.lr)
        loss, parts, f = sae.loss(x, dead_mask=dead, l0_coeff=spec.l0_coeff, aux_coeff=spec.aux_coeff)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        sae.project_decoder_grad()
        opt.step()
        sae.normalize_decoder()
        sae.clamp_theta()
        with torch.no_grad():
            fired = (f > 0).any(0)
            since_fired += x.shape[0]
            since_fired[fired] = 0
        stats = {**parts, "l0_train": float((f > 0).sum(-1).float().mean()), "dead_train": float(dead.float().mean())}
        if s in eval_at and on_eval is not None:
            on_eval((s + 1) * spec.batch, sae)
        if should_stop is not None and s % 16 == 0 and should_stop():
            break
    return sae, stats


def n_steps(n_tokens: int, batch: int) -> int:
    return max(1, n_tokens // batch)

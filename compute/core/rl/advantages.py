"""Group advantages, DAPO overlong shaping and the unbiased pass@k estimator (spec grpo_core §2 "RL step").

For the rewards r_1..r_G of one group (same ``group_key``), μ their mean and σ the Bessel-corrected std:

* ``grpo``   (Shao et al. 2024, as in verl): A_i = (r_i − μ) / (σ + 1e-6)
* ``drgrpo`` (Liu et al. 2025, Dr. GRPO):   A_i = r_i − μ
* ``rloo``   (Ahmadian et al. 2024):         A_i = r_i − mean_{j≠i} r_j = G/(G−1)·(r_i − μ)

A group of one sample gets A = 0 (no baseline; design choice).  Groups with σ = 0 carry no signal; dynamic
sampling (DAPO) drops them (``group_keep``).
"""

from __future__ import annotations

import math

import torch

ESTIMATORS = ("grpo", "drgrpo", "rloo")


def group_advantages(
    rewards: torch.Tensor, groups: torch.Tensor, estimator: str = "grpo", eps: float = 1e-6
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sequence advantages [N] and a per-sequence "group has σ > 0" flag [N] (bool)."""
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    r = rewards.double()
    adv = torch.zeros_like(r)
    keep = torch.zeros(r.shape[0], dtype=torch.bool, device=r.device)
    for g in torch.unique(groups):
        idx = (groups == g).nonzero(as_tuple=True)[0]
        G = idx.numel()
        if G < 2:
            continue
        rg = r[idx]
        mu, sd = rg.mean(), rg.std(unbiased=True)
        keep[idx] = bool(sd > 0)
        if estimator == "grpo":
            adv[idx] = (rg - mu) / (sd + eps)
        elif estimator == "drgrpo":
            adv[idx] = rg - mu
        else:
            adv[idx] = G / (G - 1) * (rg - mu)
    return adv.to(rewards.dtype), keep


def overlong_penalty(lengths: torch.Tensor, max_len: int, cache_len: int) -> torch.Tensor:
    """DAPO soft overlong punishment R_len(|y|).

    0 if |y| ≤ L_max − L_c; (L_max − L_c − |y|)/L_c for L_max − L_c < |y| ≤ L_max; −1 beyond.
    """
    L = lengths.double()
    free = max_len - cache_len
    pen = torch.where(L <= free, torch.zeros_like(L), (free - L) / max(cache_len, 1))
    return torch.where(L > max_len, torch.full_like(L, -1.0), pen).float()


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 − C(n−c, k)/C(n, k) for c correct out of n samples."""
    if k > n:
        raise ValueError("k must be ≤ n")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)

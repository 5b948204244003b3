"""Sampling model: binomial experimental arms, multinomial observational data, independent sources (spec §2).

ê1 ~ Bin(n_e1, e1)/n_e1,  ê0 ~ Bin(n_e0, e0)/n_e0,  ô ~ Mult(n_o, o)/n_o
Cov(θ̂) = blockdiag(e1(1−e1)/n_e1, e0(1−e0)/n_e0, (diag o − ooᵀ)/n_o)
"""

from __future__ import annotations

import numpy as np

from .bounds import E0, E1


def theta_cov(theta: np.ndarray, n_e1: float, n_e0: float, n_o: float) -> np.ndarray:
    """Covariance of θ̂ = (ê1, ê0, ô11, ô10, ô01, ô00), shape (..., 6, 6); the full multinomial block."""
    th = np.asarray(theta, dtype=float)
    cov = np.zeros(th.shape[:-1] + (6, 6))
    cov[..., E1, E1] = th[..., E1] * (1 - th[..., E1]) / n_e1
    cov[..., E0, E0] = th[..., E0] * (1 - th[..., E0]) / n_e0
    o = th[..., 2:]
    cov[..., 2:, 2:] = (o[..., :, None] * (np.eye(4) - o[..., None, :])) / n_o
    return cov


def theta_cov_sqrt(theta: np.ndarray, n_e1: float, n_e0: float, n_o: float) -> np.ndarray:
    """A factor B with B Bᵀ = Cov(θ̂), shape (..., 6, 6).

    Multinomial block: B_o = (diag √o − o √oᵀ)/√n_o, since B_o B_oᵀ = diag o − ooᵀ when Σ o = 1.
    """
    th = np.asarray(theta, dtype=float)
    b = np.zeros(th.shape[:-1] + (6, 6))
    b[..., E1, E1] = np.sqrt(np.clip(th[..., E1] * (1 - th[..., E1]), 0, None) / n_e1)
    b[..., E0, E0] = np.sqrt(np.clip(th[..., E0] * (1 - th[..., E0]), 0, None) / n_e0)
    o = np.clip(th[..., 2:], 0, None)
    s = np.sqrt(o)
    b[..., 2:, 2:] = (s[..., :, None] * np.eye(4) - o[..., :, None] * s[..., None, :]) / np.sqrt(n_o)
    return b


def sample_theta(theta: np.ndarray, n_e1: int, n_e0: int, n_o: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """R replicate estimates θ̂, shape (reps, 6), for one truth θ (6,)."""
    th = np.asarray(theta, dtype=float)
    out = np.empty((reps, 6))
    out[:, E1] = rng.binomial(n_e1, th[E1], size=reps) / n_e1
    out[:, E0] = rng.binomial(n_e0, th[E0], size=reps) / n_e0
    o = np.clip(th[2:], 0, None)
    out[:, 2:] = rng.multinomial(n_o, o / o.sum(), size=reps) / n_o
    return out

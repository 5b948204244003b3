"""Characteristic times T*(μ), T*_β(μ) and the optimal allocations for Bernoulli arms.

T*_β(μ)⁻¹ = max_{w ∈ Σ_K, w_{i*} = β} min_{j≠i*} [β·kl(μ*, m_j) + w_j·kl(μ_j, m_j)],  m_j = (βμ* + w_jμ_j)/(β + w_j)
(Russo 2016; Jourdan et al. 2022 §2), and T*(μ) = min_β T*_β(μ) (Garivier & Kaufmann 2016, Theorem 1).

Two solvers:

* ``t_star_beta`` / ``t_star``: scalar, nested ``brentq`` (precise; used for reference values and the dashboards);
* ``optimal_weights_batch``: GK16 Theorem 5 by nested bisection, vectorized over many instances at once
  (Track-and-Stop recomputes w*(μ̂) for every active run with it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from .rules import kl_fast

_XTOL = 1e-15
_RTOL = 1e-15


def best_arm(mu: np.ndarray | list[float]) -> int:
    """Index of the unique best arm; ValueError when the best mean is shared."""
    mu = np.asarray(mu, dtype=float)
    best = int(np.argmax(mu))
    if np.sum(mu == mu[best]) > 1:
        raise ValueError("the best arm must be unique")
    return best


def _kl(p: float, q: float) -> float:
    """Scalar Bernoulli kl, 0·log 0 = 0, q clipped like ``kl_bernoulli`` (plain floats: the solver's hot path)."""
    q = min(max(q, 1e-12), 1.0 - 1e-12)
    out = p * math.log(p / q) if p > 0.0 else 0.0
    return out + (1.0 - p) * math.log((1.0 - p) / (1.0 - q)) if p < 1.0 else out


def _cost(mu_star: float, mu_j: float, beta: float, w: float) -> float:
    """C_j(w) = β·kl(μ*, m) + w·kl(μ_j, m) with m = (βμ* + wμ_j)/(β + w); increasing in w, sup β·kl(μ*, μ_j)."""
    m = (beta * mu_star + w * mu_j) / (beta + w)
    return beta * _kl(mu_star, m) + w * _kl(mu_j, m)


@dataclass
class Allocation:
    """An optimal allocation: characteristic time, weights (sum 1) and the leader's share β."""

    time: float
    weights: np.ndarray
    beta: float


def t_star_beta(mu: np.ndarray | list[float], beta: float) -> Allocation:
    """T*_β(μ) and the β-optimal allocation w_β by nested root finding (spec §2).

    For a level y, w_j(y) solves C_j(w_j) = y (``brentq``); then y is found with Σ_{j≠i*} w_j(y) = 1 − β.
    At the optimum all C_j(w_j) equal y = 1/T*_β.
    """
    mu = np.asarray(mu, dtype=float)
    if not 0.0 < beta < 1.0:
        raise ValueError("β must lie in (0, 1)")
    i_star = best_arm(mu)
    mu_star = float(mu[i_star])
    others = [j for j in range(len(mu)) if j != i_star]

    def w_of_y(j: int, y: float) -> float:
        # y < C_j(1 − β) for every j on the bracket used below, so the root lies in [0, 1 − β]
        def f(w: float) -> float:
            return _cost(mu_star, float(mu[j]), beta, w) - y

        if f(0.0) >= 0.0:  # y ≤ C_j(0) = 0 up to rounding
            return 0.0
        return brentq(f, 0.0, 1.0 - beta, xtol=_XTOL, rtol=_RTOL)

    y_max = min(_cost(mu_star, float(mu[j]), beta, 1.0 - beta) for j in others)

    def excess(y: float) -> float:
        return sum(w_of_y(j, min(y, y_max)) for j in others) - (1.0 - beta)

    if excess(y_max) <= 0.0:  # K = 2, or the hardest arm takes everything exactly at the bracket's end
        y = y_max
    else:
        y = brentq(excess, 0.0, y_max, xtol=1e-300, rtol=_RTOL)
    w = np.zeros(len(mu))
    w[i_star] = beta
    for j in others:
        w[j] = w_of_y(j, y)
    return Allocation(time=1.0 / y, weights=w, beta=beta)


def t_star(mu: np.ndarray | list[float]) -> Allocation:
    """T*(μ) = min_β T*_β(μ) (``minimize_scalar`` bounded to (0.01, 0.99)); β* is the minimiser and w* = w_{β*}."""
    res = minimize_scalar(
        lambda b: t_star_beta(mu, b).time, bounds=(0.01, 0.99), method="bounded", options={"xatol": 1e-9}
    )
    return t_star_beta(mu, float(res.x))


def costs_at(mu: np.ndarray | list[float], weights: np.ndarray) -> np.ndarray:
    """β·kl(μ*, m_j) + w_j·kl(μ_j, m_j) for every j ≠ i* at the allocation ``weights`` (β = weights[i*])."""
    mu = np.asarray(mu, dtype=float)
    i_star = best_arm(mu)
    beta = float(weights[i_star])
    return np.array(
        [_cost(float(mu[i_star]), float(mu[j]), beta, float(weights[j])) for j in range(len(mu)) if j != i_star]
    )


def optimal_weights_batch(mu: np.ndarray, n_outer: int = 40, n_inner: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """w*(μ) and T*(μ) for a batch of instances (R, K), GK16 Theorem 5 with nested bisection.

    With b the best arm and x_a(y) solving g_a(x) = kl(μ_b, m) + x·kl(μ_a, m) = y, m = (μ_b + xμ_a)/(1 + x),
    y* solves F(y) = Σ_{a≠b} kl(μ_b, m_a)/kl(μ_a, m_a) = 1; then w*_b = 1/(1 + Σ x_a), w*_a = x_a·w*_b and
    T* = (1 + Σ x_a)/y*.  The inner problem is bisected in m ∈ (μ_a, μ_b) (bounded), the outer in y.
    Rows whose best mean is tied get uniform weights and T* = +∞.
    """
    mu = np.asarray(mu, dtype=float)
    r, k = mu.shape
    rows = np.arange(r)
    b = np.argmax(mu, axis=1)
    mu_b = mu[rows, b][:, None]  # (R, 1)
    is_b = np.zeros((r, k), dtype=bool)
    is_b[rows, b] = True
    gap = np.where(is_b, np.inf, mu_b - mu)
    degenerate = gap.min(axis=1) <= 1e-12
    mu_a = np.where(is_b | degenerate[:, None], mu_b - 0.5, mu)  # harmless stand-ins for b and tied rows
    mu_a = np.where(is_b | degenerate[:, None], np.clip(mu_a, 0.0, 1.0), mu_a)
    mu_b_safe = np.where(degenerate[:, None], np.maximum(mu_a + 0.5, mu_b), mu_b)

    def m_of_y(y: np.ndarray) -> np.ndarray:
        lo, hi = mu_a.copy(), np.broadcast_to(mu_b_safe, mu_a.shape).copy()
        for _ in range(n_inner):
            m = 0.5 * (lo + hi)
            x = (mu_b_safe - m) / (m - mu_a)
            g = kl_fast(mu_b_safe, m) + x * kl_fast(mu_a, m)
            too_low = g > y  # g decreases in m: g > y means m must grow
            lo = np.where(too_low, m, lo)
            hi = np.where(too_low, hi, m)
        return 0.5 * (lo + hi)

    kl_full = np.where(is_b, np.inf, kl_fast(mu_b_safe, mu_a))
    y_lo = np.zeros((r, 1))
    y_hi = kl_full.min(axis=1, keepdims=True)
    for _ in range(n_outer):
        y = 0.5 * (y_lo + y_hi)
        m = m_of_y(y)
        ratio = np.where(is_b, 0.0, kl_fast(mu_b_safe, m) / np.maximum(kl_fast(mu_a, m), 1e-300))
        big = ratio.sum(axis=1, keepdims=True) > 1.0
        y_hi = np.where(big, y, y_hi)
        y_lo = np.where(big, y_lo, y)
    y = 0.5 * (y_lo + y_hi)
    m = m_of_y(y)
    x = np.where(is_b, 1.0, (mu_b_safe - m) / (m - mu_a))
    total = x.sum(axis=1, keepdims=True)
    w = x / total
    t = (total / y)[:, 0]
    w = np.where(degenerate[:, None], 1.0 / k, w)
    t = np.where(degenerate, np.inf, t)
    return w, t

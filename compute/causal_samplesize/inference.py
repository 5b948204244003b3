"""Confidence intervals for a bound endpoint L = max_k T_k / min_k T_k (spec §2, "Inference for coverage").

* Naive delta: L̂ ± z·se(T̂_k̂) with k̂ the estimated active term (invalid at ties: the max is not differentiable).
* Directional delta (Fang & Santos 2019): √n(L̂ − L) → max_{k∈A} Z_k, Z ~ N(0, Σ_A); quantiles by Monte Carlo of
  the Gaussian max over the estimated near-active set Â = {k : |L̂ − T̂_k| ≤ κ_n·sd(T̂_k − T̂_k̂)},
  κ_n = √(2 log log n) (a generalized-moment-selection threshold; **design choice**).
  CI = [L̂ − q_{1−α/2}, L̂ − q_{α/2}].
  The "conservative" variant is its union with the delta intervals of the terms in Â (**design choice**).
* Percentile bootstrap (parametric = multinomial resampling of the counts); inconsistent at exact ties.
* m-out-of-n bootstrap: resample m_j = ⌈f·n_j⌉ units per source, f = n_min^{γ−1} (m = n^γ for the smallest
  source, γ = 2/3 by default, a **design choice**), and use the law of √m(L̂*_m − L̂_n) for √n(L̂_n − L):
  CI = [L̂ − √f·q_{1−α/2}, L̂ − √f·q_{α/2}] with q the quantiles of L̂*_m − L̂_n.  Consistent at ties
  because m/n → 0 (Bickel, Götze & van Zwet 1997; Andrews 2000).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .bounds import Endpoint
from .sampling import theta_cov, theta_cov_sqrt


def _active_index(ep: Endpoint, t: np.ndarray) -> np.ndarray:
    filled = np.where(np.isnan(t), -np.inf if ep.sense == "max" else np.inf, t)
    return np.argmax(filled, axis=-1) if ep.sense == "max" else np.argmin(filled, axis=-1)


def gaussian_draws(draws: int, rng: np.random.Generator) -> np.ndarray:
    """(2·m, 6) antithetic scrambled-Sobol standard normals, m = 2^⌈log2(draws/2)⌉ (low quantile noise)."""
    m = 2 ** max(1, int(np.ceil(np.log2(max(draws, 2) / 2))))
    u = stats.qmc.Sobol(6, scramble=True, seed=rng).random(m)
    x = stats.norm.ppf(np.clip(u, 1e-12, 1 - 1e-12))
    return np.vstack([x, -x])


def naive_delta_ci(
    ep: Endpoint, theta_hat: np.ndarray, n_e1: int, n_e0: int, n_o: int, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """L̂ ± z·√(g_k̂ᵀ Cov(θ̂) g_k̂) at θ̂ (R, 6); a constant active term gives a zero-width interval."""
    t = ep.terms(theta_hat)
    k = _active_index(ep, t)
    g = np.take_along_axis(ep.gradients(theta_hat), k[:, None, None], axis=1)[:, 0]  # (R, 6)
    cov = theta_cov(theta_hat, n_e1, n_e0, n_o)
    se = np.sqrt(np.clip(np.einsum("ri,rij,rj->r", g, cov, g), 0, None))
    lhat = ep.value(theta_hat)
    return lhat - z * se, lhat + z * se


def default_kappa(n: int) -> float:
    """Selection threshold κ_n = √(2 log log n) (→ ∞ slowly, κ_n/√n → 0).  **Design choice.**"""
    return float(np.sqrt(2 * np.log(np.log(max(n, 16)))))


def directional_delta_ci(
    ep: Endpoint,
    theta_hat: np.ndarray,
    n_e1: int,
    n_e0: int,
    n_o: int,
    alpha: float,
    rng: np.random.Generator,
    draws: int = 500,
    kappa: float | None = None,
    conservative: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Directional-delta CI; also returns |Â| per replicate.  θ̂ is (R, 6).

    ``conservative``: return the union with each near-active term's own delta interval, so neither a trailing
    term wrongly kept in Â nor a point mass at a constant term (0 or 1) pulls the interval off L at
    finite-sample near-ties.  **Design choice.**
    """
    t = ep.terms(theta_hat)  # (R, K)
    lhat = ep.value(theta_hat)
    k = _active_index(ep, t)
    gb = np.einsum("rki,rij->rkj", ep.gradients(theta_hat), theta_cov_sqrt(theta_hat, n_e1, n_e0, n_o))  # (R, K, 6)
    gb = np.nan_to_num(gb)
    diff = gb - np.take_along_axis(gb, k[:, None, None], axis=1)
    sd_diff = np.sqrt((diff**2).sum(-1))  # (R, K)
    if kappa is None:
        kappa = default_kappa(min(n_e1, n_e0, n_o))
    near = np.abs(lhat[:, None] - t) <= kappa * sd_diff + 1e-12
    near &= ~np.isnan(t)
    near[np.arange(len(k)), k] = True
    xi = gaussian_draws(draws, rng)
    zdraw = np.einsum("rki,mi->rkm", gb, xi)  # (R, K, M)
    if ep.sense == "max":
        w = np.where(near[..., None], zdraw, -np.inf).max(axis=1)
    else:
        w = np.where(near[..., None], zdraw, np.inf).min(axis=1)
    q_lo, q_hi = np.quantile(w, [alpha / 2, 1 - alpha / 2], axis=1)
    if conservative:  # union with every near-active term's own interval (quantiles of Z_k, k ∈ Â)
        k_lo, k_hi = np.quantile(zdraw, [alpha / 2, 1 - alpha / 2], axis=2)  # (R, K) each
        q_lo = np.minimum(q_lo, np.where(near, k_lo, np.inf).min(axis=1))
        q_hi = np.maximum(q_hi, np.where(near, k_hi, -np.inf).max(axis=1))
    return lhat - q_hi, lhat - q_lo, near.sum(axis=1)


def bootstrap_ci(
    ep: Endpoint,
    theta_hat: np.ndarray,
    n_e1: int,
    n_e0: int,
    n_o: int,
    alpha: float,
    rng: np.random.Generator,
    boots: int = 200,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap CI by resampling counts from θ̂ (R, 6)."""
    r = theta_hat.shape[0]
    star = np.empty((boots, r, 6))
    star[..., 0] = rng.binomial(n_e1, np.clip(theta_hat[:, 0], 0, 1), size=(boots, r)) / n_e1
    star[..., 1] = rng.binomial(n_e0, np.clip(theta_hat[:, 1], 0, 1), size=(boots, r)) / n_e0
    o = np.clip(theta_hat[:, 2:], 0, None)
    star[..., 2:] = rng.multinomial(n_o, o / o.sum(axis=1, keepdims=True), size=(boots, r)) / n_o
    lstar = ep.value(star)  # (B, R)
    lo, hi = np.nanquantile(lstar, [alpha / 2, 1 - alpha / 2], axis=0)
    return lo, hi


def _resample(theta_hat: np.ndarray, m_e1: int, m_e0: int, m_o: int, boots: int, rng: np.random.Generator):
    """(B, R, 6) resampled estimates drawn from θ̂ (R, 6) with m_e1, m_e0, m_o units per source."""
    r = theta_hat.shape[0]
    star = np.empty((boots, r, 6))
    star[..., 0] = rng.binomial(m_e1, np.clip(theta_hat[:, 0], 0, 1), size=(boots, r)) / m_e1
    star[..., 1] = rng.binomial(m_e0, np.clip(theta_hat[:, 1], 0, 1), size=(boots, r)) / m_e0
    o = np.clip(theta_hat[:, 2:], 0, None)
    star[..., 2:] = rng.multinomial(m_o, o / o.sum(axis=1, keepdims=True), size=(boots, r)) / m_o
    return star


def m_out_of_n_fraction(n_e1: int, n_e0: int, n_o: int, gamma: float = 2 / 3) -> float:
    """Common subsample fraction f = n_min^{γ−1}, so the smallest source is resampled at m = n_min^γ."""
    if not 0 < gamma < 1:
        raise ValueError("γ must lie in (0, 1)")
    return float(min(n_e1, n_e0, n_o) ** (gamma - 1))


def m_out_of_n_bootstrap_ci(
    ep: Endpoint,
    theta_hat: np.ndarray,
    n_e1: int,
    n_e0: int,
    n_o: int,
    alpha: float,
    rng: np.random.Generator,
    boots: int = 200,
    gamma: float = 2 / 3,
) -> tuple[np.ndarray, np.ndarray]:
    """m-out-of-n bootstrap CI (R, 6) → (lo, hi): √m-rescaled quantiles of L̂*_m − L̂_n, m_j = ⌈f·n_j⌉."""
    f = m_out_of_n_fraction(n_e1, n_e0, n_o, gamma)
    m = [max(1, int(np.ceil(f * k))) for k in (n_e1, n_e0, n_o)]
    f_eff = np.array(m) / np.array([n_e1, n_e0, n_o])  # rounding makes the fractions differ slightly
    scale = float(np.sqrt(f_eff.mean()))
    lhat = ep.value(theta_hat)  # (R,)
    d = ep.value(_resample(theta_hat, *m, boots, rng)) - lhat  # (B, R)
    q_lo, q_hi = np.nanquantile(d, [alpha / 2, 1 - alpha / 2], axis=0)
    return lhat - scale * q_hi, lhat - scale * q_lo


def clark_expected_max(mu1: float, mu2: float, s1: float, s2: float, rho: float) -> float:
    """E[max(X1, X2)] of a bivariate normal (Clark 1961): μ1Φ(a) + μ2Φ(−a) + ϑφ(a), a = (μ1 − μ2)/ϑ,
    ϑ = √(σ₁² + σ₂² − 2ρσ₁σ₂).  Equal means give μ + ϑ/√(2π)."""
    theta = float(np.sqrt(max(s1**2 + s2**2 - 2 * rho * s1 * s2, 0.0)))
    if theta == 0.0:
        return float(max(mu1, mu2))
    a = (mu1 - mu2) / theta
    return float(mu1 * stats.norm.cdf(a) + mu2 * stats.norm.cdf(-a) + theta * stats.norm.pdf(a))

"""Data-constrained scaling law for replayed SAE training, its robust fit and the buffer-sizing rule.

Law (Muennighoff et al., NeurIPS 2023, eq. 5 form; N = dictionary size, U = unique rows, R = T/U epochs):
    L(N, U, R) = E + A/N^α + B/D′^β,     D′ = U + U·R*·(1 − exp(−(R − 1)/R*))
R* is the repetition "half-life": the first few epochs are worth almost as much as fresh data, and the value
of repeated data saturates at U·(1 + R*).  With one dictionary size the A/N^α term is a constant folded into E.

Fit (Hoffmann et al. 2022): minimize Σ Huber_δ(log L̂ − log L) over θ = (log E, log A, α, log B, β, log R*) with
L-BFGS from a grid of initializations, log L̂ = LSE(log E, log A − α log N, log B − β log D′).
Rule: the smallest U with L(N, U, T/U) ≤ (1 + x)·L(N, T, 1); the storage reduction is T/U.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize


@dataclass
class LawParams:
    E: float
    A: float
    alpha: float
    B: float
    beta: float
    R_star: float

    def as_dict(self) -> dict[str, float]:
        return {"E": self.E, "A": self.A, "alpha": self.alpha, "B": self.B, "beta": self.beta, "R_star": self.R_star}


def effective_data(U: np.ndarray, R: np.ndarray, R_star: float) -> np.ndarray:
    """D′ = U + U·R*·(1 − exp(−(R − 1)/R*))."""
    U, R = np.asarray(U, float), np.asarray(R, float)
    return U + U * R_star * (1.0 - np.exp(-(R - 1.0) / R_star))


def predict(p: LawParams, N: np.ndarray, U: np.ndarray, R: np.ndarray) -> np.ndarray:
    """L(N, U, R)."""
    N = np.asarray(N, float)
    return p.E + p.A / N**p.alpha + p.B / effective_data(U, R, p.R_star) ** p.beta


def _unpack(th: np.ndarray, fit_n: bool) -> tuple[float, float, float, float, float, float]:
    if fit_n:
        e, a, al, b, be, r = th
    else:
        e, b, be, r = th
        a, al = -np.inf, 0.0
    return e, a, al, b, be, r


def _objective(th: np.ndarray, lnN, U, R, lnL, delta: float, fit_n: bool) -> tuple[float, np.ndarray]:
    """Σ Huber_δ(ρ)/δ with ρ = log L̂ − log L, and its analytic gradient."""
    e, a, al, b, be, r = _unpack(th, fit_n)
    Rs = np.exp(r)
    x = (R - 1.0) / Rs
    Dp = U + U * Rs * (1.0 - np.exp(-x))
    lnD = np.log(Dp)
    terms = np.stack([np.full_like(lnL, e), a - al * lnN, b - be * lnD])  # (3, n)
    mx = terms.max(0)
    w = np.exp(terms - mx)
    lp = mx + np.log(w.sum(0))
    w = w / w.sum(0)  # softmax weights, ∂ lp/∂ term
    rho = lp - lnL
    hub = np.where(np.abs(rho) <= delta, 0.5 * rho**2, delta * (np.abs(rho) - 0.5 * delta))
    dh = np.clip(rho, -delta, delta)  # Huber'(ρ)
    dDp_dr = U * Rs * (1.0 - np.exp(-x) * (1.0 + x))
    g_e = w[0]
    g_b = w[2]
    g_be = -w[2] * lnD
    g_r = -w[2] * be * dDp_dr / Dp
    if fit_n:
        grads = [g_e, w[1], -w[1] * lnN, g_b, g_be, g_r]
    else:
        grads = [g_e, g_b, g_be, g_r]
    g = np.array([(dh * gi).sum() for gi in grads]) / delta
    return float(hub.sum() / delta), g


@dataclass
class FitResult:
    params: LawParams
    loss: float
    fit_n: bool
    theta: np.ndarray


def fit_law(
    N: np.ndarray,
    U: np.ndarray,
    R: np.ndarray,
    L: np.ndarray,
    delta: float = 1e-3,
    fit_n: bool | None = None,
    inits: list[np.ndarray] | None = None,
    n_starts: int = 6,
) -> FitResult:
    """Huber/L-BFGS fit of log L from a grid of initializations; returns the best fit.

    ``fit_n`` (default: more than one distinct N) fits (E, A, α, B, β, R*); otherwise (E, B, β, R*) with A = 0.
    """
    N, U, R, L = (np.asarray(v, float) for v in (N, U, R, L))
    if fit_n is None:
        fit_n = len(np.unique(N)) > 1
    lnN, lnL = np.log(N), np.log(L)
    if inits is None:
        e0 = [float(np.log(L.min()) - 1.0), float(np.log(L.min()) - 3.0)]
        b0 = [0.0, 4.0, 8.0]
        be0 = [0.3, 0.8]
        r0 = [np.log(2.0), np.log(15.0), np.log(60.0)]
        if fit_n:
            grid = itertools.product(e0, [0.0, 4.0], [0.3, 0.8], b0, be0, r0)
        else:
            grid = itertools.product(e0, b0, be0, r0)
        inits = [np.array(g, float) for g in grid]
    args = (lnN, U, R, lnL, delta, fit_n)
    bounds = [(-30.0, 10.0), (-30.0, 40.0), (0.0, 3.0), (-30.0, 40.0), (0.0, 3.0), (np.log(0.05), np.log(1e5))]
    if not fit_n:
        bounds = [bounds[0], bounds[3], bounds[4], bounds[5]]
    # screen the grid, then polish the best few starts with L-BFGS (Hoffmann et al. 2022 keep the best fit)
    with np.errstate(all="ignore"):
        screen = [(_objective(th, *args)[0], i) for i, th in enumerate(inits)]
    starts = [inits[i] for _, i in sorted((v if np.isfinite(v) else np.inf, i) for v, i in screen)[:n_starts]]
    best: FitResult | None = None
    for th0 in starts:
        res = minimize(
            _objective,
            th0,
            args=args,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": 1000, "ftol": 1e-15, "gtol": 1e-9},
        )
        if not np.all(np.isfinite(res.x)):
            continue
        if best is None or res.fun < best.loss:
            e, a, al, b, be, r = _unpack(res.x, fit_n)
            p = LawParams(float(np.exp(e)), float(np.exp(a)), float(al), float(np.exp(b)), float(be), float(np.exp(r)))
            best = FitResult(p, float(res.fun), fit_n, res.x.copy())
    assert best is not None
    return best


def recommend_buffer(p: LawParams, N: float, T: float, tol: float = 0.01, R_max: float = 4096.0) -> dict[str, float]:
    """Smallest U with L(N, U, T/U) ≤ (1 + tol)·L(N, T, 1); D′(U, T/U) rises with U, so scan a log grid of U."""
    L_fresh = float(predict(p, N, T, 1.0))
    Us = np.exp(np.linspace(np.log(T / R_max), np.log(T), 4000))
    Ls = predict(p, N, Us, T / Us)
    ok = Ls <= (1.0 + tol) * L_fresh
    U = float(Us[np.argmax(ok)]) if ok.any() else float(T)
    return {"U": U, "storage_reduction": T / U, "L_fresh": L_fresh, "L_at_U": float(predict(p, N, U, T / U))}


def bootstrap(
    N: np.ndarray,
    U: np.ndarray,
    R: np.ndarray,
    L: np.ndarray,
    base: FitResult,
    T: float,
    N_rule: float,
    tol: float,
    n_boot: int = 100,
    seed: int = 0,
    delta: float = 1e-3,
) -> dict[str, tuple[float, float]]:
    """Percentile 95 % CIs of R* and of the recommended T/U, resampling runs with replacement."""
    rng = np.random.default_rng(seed)
    n = len(L)
    rs, red = [], []
    for _ in range(n_boot):
        idx = rng.integers(0, n, n)
        inits = [base.theta, base.theta + rng.normal(0, 0.3, base.theta.shape)]
        f = fit_law(N[idx], U[idx], R[idx], L[idx], delta=delta, fit_n=base.fit_n, inits=inits)
        rs.append(f.params.R_star)
        red.append(recommend_buffer(f.params, N_rule, T, tol)["storage_reduction"])
    if not rs:
        return {"R_star": (float("nan"), float("nan")), "storage_reduction": (float("nan"), float("nan"))}
    q = lambda v: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5)))  # noqa: E731
    return {"R_star": q(rs), "storage_reduction": q(red)}

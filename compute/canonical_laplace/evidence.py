"""Laplace evidence, empirical-Bayes prior-precision selection and the GLM predictive.

Evidence for a diagonal prior precision P₀ (laplace-torch ``log_marginal_likelihood``; paper §2):
    log Z = log p(D|θ) − ½[log det(G + P₀) − log det P₀ + θᵀP₀θ].
With P₀ = λD² and G̃ = D⁻¹GD⁻¹, θ̃ = Dθ this is
    log Z = log p(D|θ) − ½[Σ_k log(1 + ẽ_k/λ) + λ‖θ̃‖²],
so one spectrum of G̃ gives log Z for every λ.  Standard EB: D = I.  γ-canonical: D = D_γ(θ).
The stationarity condition d log Z/dλ = 0 is MacKay's (1992) fixed point λ = γ_eff/‖θ̃‖²,
γ_eff = Σ ẽ_k/(ẽ_k + λ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import brentq
from torch import Tensor

from .curvature import Curvature, Spectrum

LOG10_LAMBDA_BOUNDS = (-8.0, 8.0)


def log_evidence_dense(loglik: float, g: Tensor, theta: Tensor, prior_prec: Tensor) -> float:
    """Reference slogdet form: log p(D|θ) − ½[log det(G + P₀) − Σ log p₀ + Σ p₀θ²] (P₀ = diag prior_prec)."""
    sign, logdet = torch.linalg.slogdet(g + torch.diag(prior_prec))
    if sign <= 0:
        raise ValueError("G + P0 is not positive definite")
    return float(loglik - 0.5 * (logdet - prior_prec.log().sum() + (prior_prec * theta**2).sum()))


def log_evidence_eig(loglik: float, eig: Tensor, sq_norm: float, lam: float) -> float:
    """Eigenvalue form for P₀ = λI on G̃ with eigenvalues ẽ and ‖θ̃‖² = sq_norm."""
    return float(loglik - 0.5 * (torch.log1p(eig.clamp_min(0) / lam).sum() + lam * sq_norm))


def log_evidence_grid(loglik: float, eig: Tensor, sq_norm: float, lams: Tensor) -> Tensor:
    """log Z at each λ of ``lams`` (L,) from one spectrum: (L,)."""
    e = eig.clamp_min(0)
    return loglik - 0.5 * (torch.log1p(e[None, :] / lams[:, None]).sum(1) + lams * sq_norm)


def mackay_gap(eig: np.ndarray, sq_norm: float, lam: float) -> float:
    """γ_eff(λ) − λ‖θ̃‖²; zero exactly at d log Z/dλ = 0, positive below the optimum."""
    return float(np.sum(eig / (eig + lam)) - lam * sq_norm)


def select_lambda(eig: Tensor, sq_norm: float, n_grid: int = 161) -> float:
    """argmax_λ log Z for P₀ = λI on spectrum ``eig``: grid over log λ, then MacKay's fixed point.

    The gap γ_eff(λ) − λ‖θ̃‖² decreases strictly in λ, so log Z is unimodal: the grid brackets the
    root, Brent's method solves it to machine precision, one MacKay step λ ← γ_eff/‖θ̃‖² polishes it.
    Falls back to a bound of [1e-8, 1e8] if the optimum lies outside.
    """
    e = eig.detach().cpu().numpy().clip(min=0)
    lo_b, hi_b = LOG10_LAMBDA_BOUNDS
    if sq_norm <= 0:
        return 10.0**hi_b
    grid = np.logspace(lo_b, hi_b, n_grid)
    gaps = (e[None, :] / (e[None, :] + grid[:, None])).sum(1) - grid * sq_norm  # mackay_gap on the whole grid
    if gaps[0] <= 0:
        return float(grid[0])
    if gaps[-1] >= 0:
        return float(grid[-1])
    i = int(np.argmax(gaps < 0))
    log_lam = brentq(
        lambda t: mackay_gap(e, sq_norm, 10.0**t), math.log10(grid[i - 1]), math.log10(grid[i]), xtol=1e-15
    )
    lam = 10.0**log_lam
    return float(np.sum(e / (e + lam)) / sq_norm)  # MacKay step (a no-op at the root)


@dataclass
class LaplaceFit:
    """One Laplace fit: prior P₀ = λ·D² (D per parameter), the whitened curvature and the evidence."""

    method: str
    lam: float  # the scalar λ in P₀ = λD² (layer-wise: 1, the λ_l live in D²)
    d: Tensor  # (P,) D (ones for standard scalar)
    curv_w: Curvature  # G̃ = D⁻¹GD⁻¹
    eig: Tensor  # (P,) eigenvalues of G̃ (round-off set to 0)
    theta_tilde: Tensor  # (P,) θ̃ = Dθ
    log_z: float
    loglik: float
    extra: dict
    _spectrum: Spectrum | None = None

    @property
    def prior_precision(self) -> Tensor:
        """The per-parameter prior precision vector λD² (laplace-torch ``prior_precision``)."""
        return self.lam * self.d**2

    @property
    def spectrum(self) -> Spectrum:
        """Eigen-pairs of G̃, computed on first use (only the predictive needs eigenvectors)."""
        if self._spectrum is None:
            self._spectrum = self.curv_w.spectrum()
        return self._spectrum

    def latent_cov(self, jac_star: Tensor) -> Tensor:
        """GLM latent covariance J*(G + P₀)⁻¹J*ᵀ = J̃*(G̃ + λI)⁻¹J̃*ᵀ with J̃* = J*D⁻¹: (T, K, K)."""
        return self.spectrum.inv_quad(jac_star / self.d, self.lam)


def fit_whitened(
    method: str, curv: Curvature, theta: Tensor, loglik: float, d: Tensor, lam: float | None = None, **extra: object
) -> LaplaceFit:
    """Fit P₀ = λD² with λ chosen by evidence (or given) on the whitened curvature D⁻¹GD⁻¹."""
    cw = curv.whiten(d)
    eig = cw.eigvals()
    tt = d * theta
    sq = float((tt**2).sum())
    if lam is None:
        lam = select_lambda(eig, sq)
    log_z = loglik - 0.5 * (float(torch.log1p(eig / lam).sum()) + lam * sq)
    return LaplaceFit(method, float(lam), d, cw, eig, tt, float(log_z), float(loglik), dict(extra))


def fit_standard_scalar(curv: Curvature, theta: Tensor, loglik: float) -> LaplaceFit:
    """Standard EB baseline: P₀ = λI with λ* = argmax log Z, tuned separately on each representative."""
    return fit_whitened("standard_scalar", curv, theta, loglik, torch.ones_like(theta))


def select_layerwise(
    curv: Curvature, theta: Tensor, groups: list[slice], lam0: float, max_sweeps: int = 100, rtol: float = 1e-10
) -> tuple[Tensor, int]:
    """Layer-wise λ_l by exact coordinate ascent on log Z.

    With the other groups fixed, the Schur complement of G + P₀ onto group l is
    λ_l I + C_lᵀC_l, C_l = L⁻¹B_l, LLᵀ = I + B_{−l}P_{−l}⁻¹B_{−l}ᵀ (Woodbury), so log Z(λ_l) has the
    scalar form with the spectrum of C_lᵀC_l and ‖θ_l‖²: each coordinate step is an exact maximisation.
    Returns (λ per group, sweeps used).
    """
    b = curv.factor()
    m = b.shape[0]
    lams = torch.full((len(groups),), float(lam0), dtype=theta.dtype, device=theta.device)
    eye = torch.eye(m, dtype=theta.dtype, device=theta.device)
    idx = torch.arange(theta.numel(), device=theta.device)
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):  # noqa: B007 (the count is used after the loop)
        old = lams.clone()
        for gi, g in enumerate(groups):
            rest = (idx < g.start) | (idx >= g.stop)
            p_rest = torch.cat(
                [
                    torch.full((s.stop - s.start,), float(lams[j]), dtype=theta.dtype, device=theta.device)
                    for j, s in enumerate(groups)
                    if j != gi
                ]
            )
            b_rest = b[:, rest]
            chol = torch.linalg.cholesky(eye + (b_rest / p_rest[None, :]) @ b_rest.T)
            c = torch.linalg.solve_triangular(chol, b[:, g], upper=False)  # (M, P_l)
            gram = c @ c.T if c.shape[0] <= c.shape[1] else c.T @ c
            e = torch.linalg.eigvalsh(gram).clamp_min(0)
            lams[gi] = select_lambda(e, float((theta[g] ** 2).sum()))
        if float(((lams - old).abs() / old).max()) < rtol:
            break
    return lams, sweeps


def fit_standard_layerwise(
    curv: Curvature, theta: Tensor, loglik: float, groups: list[slice], lam0: float
) -> LaplaceFit:
    """Standard EB baseline with one λ_l per layer: P₀ = diag(λ_l), i.e. D = √P₀ and λ = 1."""
    lams, sweeps = select_layerwise(curv, theta, groups, lam0)
    p0 = torch.cat(
        [
            torch.full((g.stop - g.start,), float(lams[i]), dtype=theta.dtype, device=theta.device)
            for i, g in enumerate(groups)
        ]
    )
    fit = fit_whitened("standard_layerwise", curv, theta, loglik, p0.sqrt(), lam=1.0, sweeps=sweeps)
    fit.extra["lambdas"] = [float(v) for v in lams]
    return fit


def gaussian_predictive_var(fit: LaplaceFit, jac_star: Tensor, sigma: float) -> Tensor:
    """Predictive variance of y* for 1-output regression: J*(G+P₀)⁻¹J*ᵀ + σ² → (T,)."""
    return fit.latent_cov(jac_star)[:, 0, 0] + sigma**2


def probit_probs(f_star: Tensor, cov: Tensor) -> Tensor:
    """Probit (generalised) approximation of E[softmax(f)]: softmax(f_k / √(1 + π/8 Σ_kk)) (T, K)."""
    scale = torch.sqrt(1 + math.pi / 8 * torch.diagonal(cov, dim1=-2, dim2=-1))
    return torch.softmax(f_star / scale, dim=-1)

"""Jacobians and curvature (GGN or Hessian) of the negative log-likelihood, float64.

GGN (paper §2, laplace-torch convention): G = Σ_n J_nᵀ Λ_n J_n with Λ_n = I/σ² (Gaussian) or
Λ_n = diag p_n − p_n p_nᵀ (softmax).  It is stored as a factor B (M×P) with G = BᵀB: B_n = L_nᵀ J_n with L_n L_nᵀ = Λ_n
(L_n = I/σ, or the K − 1 nonzero eigen-pairs of the softmax Λ_n).
Under θ′ = Sθ: J′ = J S⁻¹, B′ = B S⁻¹, G′ = S⁻¹ G S⁻¹ (the Hessian likewise).

Every Laplace fit here uses a *whitened* curvature: for a diagonal prior P₀ = λ D², G + P₀ =
D (D⁻¹GD⁻¹ + λI) D, so only the spectrum of G̃ = D⁻¹GD⁻¹ and the scalar λ matter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.func import hessian, jacrev

from .model import MLP

# relative cut below which eigenvalues are treated as exact zeros (null space of G).  Round-off in eigh is
# ~M·ε·e_max ≈ 3e-14·e_max; without the cut, noise eigenvalues differ between representatives and at λ = 1e-4
# move log Z by ~1e-7 (design choice: invariance of the near-null space beats resolving e < 1e-12·e_max).
GRAM_RTOL = 1e-12


def jacobian(mlp: MLP, theta: Tensor, x: Tensor) -> Tensor:
    """J = ∂f(x;θ)/∂θ by reverse mode (torch.func.jacrev): (N, K, P)."""
    return jacrev(lambda th: mlp.forward(th, x))(theta)


def log_likelihood(f: Tensor, y: Tensor, likelihood: str, sigma: float) -> Tensor:
    """log p(D|θ): −SSE/(2σ²) − N·K·log(σ√(2π)) (Gaussian) or Σ_n log softmax(f_n)[y_n]."""
    if likelihood == "regression":
        n_out = f.numel()
        return -((f - y) ** 2).sum() / (2 * sigma**2) - n_out * math.log(sigma * math.sqrt(2 * math.pi))
    return torch.log_softmax(f, dim=-1).gather(-1, y[:, None]).sum()


def ggn_factor(jac: Tensor, f: Tensor, likelihood: str, sigma: float) -> Tensor:
    """B (M, P) with G = BᵀB = Σ_n J_nᵀ Λ_n J_n.

    Gaussian: B = J/σ (M = N·K).  Softmax: Λ_n = diag p_n − p_n p_nᵀ has rank K − 1 (Λ_n 1 = 0), so
    B_n = diag(√μ_n) Q_nᵀ J_n over the K − 1 nonzero eigen-pairs (μ_n, Q_n) of Λ_n (M = N·(K − 1)).
    """
    n, k, p = jac.shape
    if likelihood == "regression":
        return jac.reshape(n * k, p) / sigma
    prob = torch.softmax(f, dim=-1)  # (N, K)
    lam = torch.diag_embed(prob) - prob[:, :, None] * prob[:, None, :]  # (N, K, K)
    mu, q = torch.linalg.eigh(lam)  # ascending: mu[:, 0] is the null direction 1/√K
    lfac = q[:, :, 1:] * mu[:, None, 1:].clamp_min(0).sqrt()  # (N, K, K-1): Λ_n = L_n L_nᵀ
    return torch.einsum("nkj,nkp->njp", lfac, jac).reshape(n * (k - 1), p)


def hessian_nll(mlp: MLP, theta: Tensor, x: Tensor, y: Tensor, likelihood: str, sigma: float) -> Tensor:
    """Full Hessian of −log p(D|θ) (P, P) by torch.func.hessian (forward-over-reverse)."""
    h = hessian(lambda th: -log_likelihood(mlp.forward(th, x), y, likelihood, sigma))(theta)
    return 0.5 * (h + h.T)


@dataclass
class Spectrum:
    """Nonzero eigen-pairs of a PSD curvature G̃ (P×P): G̃ = V diag(e) Vᵀ, V (P, r) orthonormal.

    ``full`` is True when V spans all of ℝ^P (no null-space complement to add).
    """

    e: Tensor  # (r,)
    v: Tensor  # (P, r)
    n_params: int
    full: bool

    def eigenvalues(self) -> Tensor:
        """All P eigenvalues (zeros included), clamped at 0."""
        pad = self.n_params - self.e.numel()
        return torch.cat([self.e.clamp_min(0), self.e.new_zeros(pad)])

    def logdet_ratio(self, lam: float) -> float:
        """log det(G̃ + λI) − P log λ = Σ_k log(1 + e_k/λ)."""
        return float(torch.log1p(self.e.clamp_min(0) / lam).sum())

    def inv_quad(self, js: Tensor, lam: float) -> Tensor:
        """J̃*(G̃ + λI)⁻¹J̃*ᵀ for J̃* (T, K, P) → (T, K, K).

        = A diag(1/(e+λ)) Aᵀ + R Rᵀ/λ with A = J̃*V and R = J̃* − A Vᵀ (the null-space part).
        """
        a = js @ self.v  # (T, K, r)
        cov = torch.einsum("tkr,r,tjr->tkj", a, 1.0 / (self.e.clamp_min(0) + lam), a)
        if not self.full:
            res = js - a @ self.v.T
            cov = cov + res @ res.transpose(-1, -2) / lam
        return cov


class Curvature:
    """G = BᵀB (GGN factor) or a dense symmetric Hessian H; ``whiten(d)`` gives D⁻¹GD⁻¹."""

    def __init__(self, factor: Tensor | None = None, dense: Tensor | None = None) -> None:
        if (factor is None) == (dense is None):
            raise ValueError("give exactly one of factor (GGN) or dense (Hessian)")
        self.b = factor
        self.h = dense

    @property
    def n_params(self) -> int:
        return int(self.b.shape[1] if self.b is not None else self.h.shape[0])  # type: ignore[union-attr]

    def whiten(self, d: Tensor) -> Curvature:
        """Curvature in the coordinates θ̃ = Dθ: B D⁻¹, or D⁻¹HD⁻¹."""
        if self.b is not None:
            return Curvature(factor=self.b / d[None, :])
        return Curvature(dense=self.h / (d[:, None] * d[None, :]))  # type: ignore[index]

    def matrix(self) -> Tensor:
        """Dense P×P curvature (GGN: BᵀB; Hessian: as is, possibly indefinite)."""
        return self.b.T @ self.b if self.b is not None else self.h  # type: ignore[union-attr,return-value]

    def factor(self) -> Tensor:
        """A factor F with FᵀF = G (Hessian: its positive part, eigenvalues clamped at 0)."""
        if self.b is not None:
            return self.b
        e, q = torch.linalg.eigh(self.h)  # type: ignore[arg-type]
        keep = e > 0
        return e[keep].sqrt()[:, None] * q[:, keep].T

    def spectrum(self) -> Spectrum:
        """Eigen-pairs of G (round-off eigenvalues set to 0) for the predictive.

        GGN with N·K < P: thin SVD of the factor, B = U S Vᵀ, e = S².  Design choice: eigenvectors obtained
        from the Gram matrix as BᵀU/√e lose orthogonality like ε·e_max/e_k and corrupted the null-space part of
        the GLM variance (≈4e-8 orbit deviations); the SVD keeps V orthonormal to ε.
        """
        p = self.n_params
        if self.b is not None and self.b.shape[0] < p:
            _, s, vh = torch.linalg.svd(self.b, full_matrices=False)
            e = s**2
            keep = e > GRAM_RTOL * e.max().clamp_min(1e-300)
            return Spectrum(e[keep], vh[keep].T, p, full=False)
        e, q = torch.linalg.eigh(self.matrix())
        e = torch.where(e > GRAM_RTOL * e.max().clamp_min(1e-300), e, torch.zeros_like(e))
        return Spectrum(e, q, p, full=True)

    def eigvals(self) -> Tensor:
        """All P eigenvalues without eigenvectors; below GRAM_RTOL·max (round-off) set to 0, as in ``spectrum``."""
        p = self.n_params
        if self.b is not None and self.b.shape[0] < p:
            e = torch.linalg.eigvalsh(self.b @ self.b.T)
            e = torch.cat([e, e.new_zeros(p - e.numel())])
        else:
            e = torch.linalg.eigvalsh(self.matrix())
        return torch.where(e > GRAM_RTOL * e.max().clamp_min(1e-300), e, torch.zeros_like(e))

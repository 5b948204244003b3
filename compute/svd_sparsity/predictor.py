"""Truncation-aware (whitened) SVD predictor of the ReGLU gate, and the unwhitened baseline (spec §2).

On calibration FFN inputs X (n×d), in float64 (spec §6 "Numerics")::

    C = XᵀX + εI,  ε = eps_rel · tr(XᵀX)/d;   C = S Sᵀ (Cholesky, S lower-triangular)
    W_g S = U Σ Vᵀ;   A = U_r Σ_r  (d_ff×r),   B = V_rᵀ S⁻¹  (r×d)         (SVD-LLM's data whitening)
    ĝ(x) = A (B x)  costs r(d + d_ff) MACs instead of d·d_ff

Truncation awareness: with ε = 0, ‖(W_g − AB) Xᵀ‖_F² = ‖(W_g − AB) S‖_F² = Σ_{i>r} σ_i², so dropping the
smallest singular values is optimal for the *calibration activations* (Eckart–Young on W_g S), not for W_g
itself.  ``whiten=False`` is the plain truncated SVD of W_g (S = I).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class SVDFactors:
    """Full-rank factors of one layer: W_g = U diag(σ) R with R = Vᵀ S⁻¹ (all float64)."""

    U: torch.Tensor  # [d_ff, d]
    sigma: torch.Tensor  # [d], descending
    R: torch.Tensor  # [d, d] = Vᵀ S⁻¹ (= Vᵀ when unwhitened)
    whitened: bool

    @property
    def full_rank(self) -> int:
        return int(self.sigma.numel())

    def truncate(self, r: int, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
        """(A [d_ff, r], B [r, d]) of the rank-r predictor ĝ = A(Bx), cast for inference."""
        r = max(1, min(int(r), self.full_rank))
        A = self.U[:, :r] * self.sigma[:r]
        return A.to(dtype).contiguous(), self.R[:r].to(dtype).contiguous()

    def tail_energy(self, r: int) -> float:
        """√(Σ_{i>r} σ_i²): the calibration truncation loss predicted by the whitened identity."""
        return float(self.sigma[int(r) :].pow(2).sum().sqrt())


def whitening(X: torch.Tensor, eps_rel: float = 1e-6) -> torch.Tensor:
    """Lower-triangular S with S Sᵀ = XᵀX + εI, ε = eps_rel·tr(XᵀX)/d (float64)."""
    X = X.double()
    C = X.T @ X
    d = C.shape[0]
    eps = eps_rel * float(torch.trace(C)) / d
    C = C + eps * torch.eye(d, dtype=C.dtype)
    S, info = torch.linalg.cholesky_ex(C)
    bump = eps if eps > 0 else 1e-12 * float(torch.trace(C)) / d
    while int(info) != 0:  # not positive definite in floating point: add more ridge
        bump *= 10
        S, info = torch.linalg.cholesky_ex(C + bump * torch.eye(d, dtype=C.dtype))
    return S


def factorize(W_g: torch.Tensor, X: torch.Tensor | None, whiten: bool = True, eps_rel: float = 1e-6) -> SVDFactors:
    """SVD factors of the gate W_g [d_ff, d], whitened by calibration inputs X [n, d] when ``whiten``."""
    W = W_g.detach().double()
    if not whiten:
        U, sigma, Vt = torch.linalg.svd(W, full_matrices=False)
        return SVDFactors(U, sigma, Vt, False)
    if X is None:
        raise ValueError("whitening needs calibration inputs X")
    S = whitening(X, eps_rel)
    U, sigma, Vt = torch.linalg.svd(W @ S, full_matrices=False)
    # R = Vᵀ S⁻¹  ⇔  Sᵀ Rᵀ = V  (a triangular solve; S⁻¹ is never formed)
    R = torch.linalg.solve_triangular(S.T, Vt.T, upper=True).T
    return SVDFactors(U, sigma, R, True)


def truncation_loss(W_g: torch.Tensor, A: torch.Tensor, B: torch.Tensor, X: torch.Tensor) -> float:
    """‖(W_g − AB) Xᵀ‖_F on calibration inputs (float64)."""
    E = W_g.double() - A.double() @ B.double()
    return float(torch.linalg.matrix_norm(E @ X.double().T))


def predictor_macs(r: int, d: int, d_ff: int) -> int:
    """MACs of ĝ = A(Bx): r·d + d_ff·r."""
    return r * (d + d_ff)

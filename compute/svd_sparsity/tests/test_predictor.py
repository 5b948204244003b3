"""Truncation-aware SVD predictor known answers (spec §5 "Predictor")."""

from __future__ import annotations

import math

import torch

from compute.svd_sparsity.predictor import factorize, predictor_macs, truncation_loss


def _data(n: int = 3000, d: int = 16, d_ff: int = 48, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    # anisotropic, correlated inputs (as FFN inputs are): whitening then matters
    mix = torch.randn(d, d, generator=gen, dtype=torch.float64) * torch.logspace(0, -2, d, dtype=torch.float64)
    X = torch.randn(n, d, generator=gen, dtype=torch.float64) @ mix.T
    W = torch.randn(d_ff, d, generator=gen, dtype=torch.float64)
    return X, W


def test_full_rank_whitened_reproduces_the_gate() -> None:
    X, W = _data()
    F = factorize(W, X, whiten=True)
    A, B = F.truncate(F.full_rank, dtype=torch.float64)
    torch.testing.assert_close(A @ B, W, atol=1e-6, rtol=0)
    g, g_hat = X @ W.T, X @ B.T @ A.T
    torch.testing.assert_close(g_hat, g, atol=1e-6, rtol=0)
    # at τ = 0 the predicted active set is the oracle's, except entries with |g| < 1e-6
    differ = (g_hat > 0) != (g > 0)
    assert bool((g[differ].abs() < 1e-6).all())


def test_truncation_identity_equals_discarded_singular_values() -> None:
    """ε = 0, float64: ‖(W_g − AB)Xᵀ‖_F = √(Σ_{i>r} σ_i²) at every rank (rtol 1e-6)."""
    X, W = _data()
    F = factorize(W, X, whiten=True, eps_rel=0.0)
    for r in range(1, F.full_rank):
        A, B = F.truncate(r, dtype=torch.float64)
        measured = truncation_loss(W, A, B, X)
        assert math.isclose(measured, F.tail_energy(r), rel_tol=1e-6), (r, measured, F.tail_energy(r))


def test_whitened_never_worse_than_plain_svd_on_calibration_data() -> None:
    """Eckart–Young on W_g S: the whitened rank-r loss is the minimum over all rank-r AB."""
    X, W = _data(seed=1)
    Fw, Fr = factorize(W, X, whiten=True, eps_rel=0.0), factorize(W, X, whiten=False)
    strictly = 0
    for r in range(1, Fw.full_rank):
        lw = truncation_loss(W, *Fw.truncate(r, torch.float64), X)
        lr = truncation_loss(W, *Fr.truncate(r, torch.float64), X)
        assert lw <= lr * (1 + 1e-9)
        strictly += lw < 0.9 * lr
    assert strictly >= 5  # and clearly better on anisotropic inputs


def test_plain_svd_is_frobenius_optimal_on_the_weights() -> None:
    _, W = _data()
    F = factorize(W, None, whiten=False)
    A, B = F.truncate(5, dtype=torch.float64)
    assert math.isclose(float(torch.linalg.matrix_norm(W - A @ B)), F.tail_energy(5), rel_tol=1e-9)


def test_predictor_macs() -> None:
    assert predictor_macs(32, 256, 1024) == 32 * 256 + 1024 * 32

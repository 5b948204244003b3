"""Per-layer predictor fitting shared by the experiments: factorize, choose the rank, calibrate thresholds."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from compute.svd_sparsity.calibrate import (
    LayerData,
    calibrate_thresholds,
    cett_weights,
    mask_metrics,
    predict_scores,
)
from compute.svd_sparsity.executor import MaskedFFN
from compute.svd_sparsity.predictor import SVDFactors, factorize

AUTO_RANKS = (16, 32, 64, 128)  # plus d (full rank); spec §2 "Rank selection"


@dataclass
class LayerPredictor:
    """A calibrated rank-r predictor of one layer: P = {i : A(Bx)_i > τ_i}."""

    A: torch.Tensor  # [d_ff, r]
    B: torch.Tensor  # [r, d]
    tau: torch.Tensor  # 0-d or [d_ff]
    rank: int
    cal: dict[str, float]  # calibration recall / precision / density / natural sparsity

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        return (x @ self.B.T) @ self.A.T

    def selector(self):  # (x, g) -> bool mask
        return lambda x, g: self.scores(x) > self.tau.to(x.dtype)


def fit_layer(
    ld: LayerData,
    rho: float,
    rank: int = 0,
    whiten: bool = True,
    granularity: str = "layer",
    weighted: bool = False,
    density_budget: float = 1.5,
    eps_rel: float = 1e-6,
    factors: SVDFactors | None = None,
    g_cal: torch.Tensor | None = None,
) -> LayerPredictor:
    """Factorize W_g (whitened by the calibration inputs), pick the rank, calibrate τ to recall ρ.

    rank = 0: the smallest r in {16, 32, 64, 128, d} whose calibration density at recall ρ is at most
    ``density_budget`` × the natural density (design choice; the paper does not say how it picks ranks).
    """
    d = ld.X.shape[1]
    F = factors if factors is not None else factorize(ld.W_g, ld.X, whiten=whiten, eps_rel=eps_rel)
    g = g_cal if g_cal is not None else ld.gate()
    weights = cett_weights(g, ld.X @ ld.W_u.T, ld.W_d) if weighted else None
    natural = float((g > 0).float().mean())
    candidates = [rank] if rank else [r for r in AUTO_RANKS if r < d] + [d]
    best = None
    for r in candidates:
        A, B = F.truncate(r)
        gh = predict_scores(ld.X, A, B)
        tau = calibrate_thresholds(gh, g, rho, granularity, weights)
        m = mask_metrics(gh > tau.to(gh.dtype), g)
        best = LayerPredictor(A, B, tau, min(r, d), m)
        if m["density"] <= density_budget * natural:
            break
    assert best is not None
    return best


def masked_modules(model, preds: list[LayerPredictor]) -> list[MaskedFFN]:
    return [MaskedFFN(blk.ffn, p.selector()) for blk, p in zip(model.blocks, preds, strict=True)]

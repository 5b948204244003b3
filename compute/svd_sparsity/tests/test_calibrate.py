"""Threshold calibration known answers (spec §5 "Calibration") and held-out recall (issue 12 'must show')."""

from __future__ import annotations

import math

import numpy as np
import torch

from compute.svd_sparsity.calibrate import LayerData, calibrate_thresholds, mask_metrics, predict_scores
from compute.svd_sparsity.pipeline import fit_layer
from compute.svd_sparsity.predictor import factorize


def _layer(n: int, seed: int, d: int = 24, d_ff: int = 96) -> LayerData:
    gen = torch.Generator().manual_seed(100)  # the same weights for every split
    W_g = torch.randn(d_ff, d, generator=gen) / d**0.5 - 0.4 / d**0.5  # biased negative: sparse activity
    W_u = torch.randn(d_ff, d, generator=gen) / d**0.5
    W_d = torch.randn(d, d_ff, generator=gen) / d_ff**0.5
    mix = torch.randn(d, d, generator=gen) * torch.logspace(0, -1.5, d)
    gx = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=gx) @ mix.T + 0.3
    return LayerData(X, W_g, W_u, W_d)


def test_recall_and_density_do_not_increase_with_tau() -> None:
    ld = _layer(2000, 0)
    A, B = factorize(ld.W_g, ld.X).truncate(6)
    gh, g = predict_scores(ld.X, A, B), ld.gate()
    prev = None
    for tau in np.linspace(float(gh.min()) - 1, float(gh.max()) + 1, 41):
        m = mask_metrics(gh > tau, g)
        if prev is not None:
            assert m["recall"] <= prev["recall"] and m["density"] <= prev["density"]
        prev = m
    assert prev["density"] == 0.0


def test_calibration_recall_hits_target_within_quantile_granularity() -> None:
    ld = _layer(3000, 0)
    A, B = factorize(ld.W_g, ld.X).truncate(6)
    gh, g = predict_scores(ld.X, A, B), ld.gate()
    m = int((g > 0).sum())
    for rho in (0.5, 0.9, 0.99, 0.999):
        rec = mask_metrics(gh > calibrate_thresholds(gh, g, rho), g)["recall"]
        assert rho - 1e-12 <= rec <= rho + 1.0 / m + 1e-12, (rho, rec)


def test_per_neuron_and_weighted_calibration() -> None:
    ld = _layer(3000, 0)
    A, B = factorize(ld.W_g, ld.X).truncate(6)
    gh, g = predict_scores(ld.X, A, B), ld.gate()
    taus = calibrate_thresholds(gh, g, 0.9, "neuron")
    act = g > 0
    hit = (gh > taus) & act
    for i in range(g.shape[1]):
        if act[:, i].any():
            assert float(hit[:, i].sum()) >= 0.9 * float(act[:, i].sum()) - 1e-9
    w = torch.rand(g.shape, generator=torch.Generator().manual_seed(3)) * act
    tau = calibrate_thresholds(gh, g, 0.95, weights=w)
    missed = float(w[act & (gh <= tau)].sum()) / float(w[act].sum())
    assert missed <= 0.05 + 1e-9


def test_calibrated_predictor_meets_target_recall_on_heldout_data() -> None:
    """Exchangeable calibration / held-out tokens: held-out recall ≥ ρ up to a 4σ binomial margin."""
    cal, ho = _layer(10000, 1), _layer(10000, 2)
    for rho in (0.95, 0.99):
        pred = fit_layer(cal, rho, rank=8)
        g = ho.gate()
        m = mask_metrics(pred.scores(ho.X) > pred.tau, g)
        n_active = float((g > 0).sum())
        margin = 4 * math.sqrt(rho * (1 - rho) / n_active)
        assert m["recall"] >= rho - margin, (rho, m)
        assert m["density"] < 1.0  # and it does skip neurons


def test_auto_rank_is_the_smallest_within_budget() -> None:
    """Brute force: the chosen rank is the first of {16, d} whose calibration density ≤ budget × natural."""
    cal = _layer(3000, 1)
    natural = float((cal.gate() > 0).float().mean())
    dens = {r: fit_layer(cal, 0.999, rank=r).cal["density"] for r in (16, 24)}
    for budget in (1.0, 0.5 * (dens[16] + dens[24]) / natural, 10.0):
        expected = 16 if dens[16] <= budget * natural else 24
        assert fit_layer(cal, 0.999, rank=0, density_budget=budget).rank == expected
    assert dens[24] < dens[16]  # full rank is the tighter predictor

"""T*(μ), T*_β(μ) and the optimal allocations against closed forms and Garivier & Kaufmann (2016)'s numbers."""

from __future__ import annotations

import numpy as np
import pytest

from compute.toptwo_bai.characteristic import best_arm, costs_at, optimal_weights_batch, t_star, t_star_beta
from compute.toptwo_bai.rules import kl_bernoulli

MU1 = [0.5, 0.45, 0.43, 0.40]  # GK16 §5
MU2 = [0.3, 0.21, 0.2, 0.19, 0.18]


@pytest.mark.parametrize(("mu1", "mu2", "beta"), [(0.5, 0.45, 0.5), (0.9, 0.2, 0.3), (0.3, 0.05, 0.77)])
def test_two_arms_closed_form(mu1: float, mu2: float, beta: float) -> None:
    # K = 2: w = (β, 1 − β) and T*_β⁻¹ = β·kl(μ1, m) + (1 − β)·kl(μ2, m), m = βμ1 + (1 − β)μ2
    m = beta * mu1 + (1 - beta) * mu2
    inv = beta * float(kl_bernoulli(mu1, m)) + (1 - beta) * float(kl_bernoulli(mu2, m))
    alloc = t_star_beta([mu1, mu2], beta)
    assert 1.0 / alloc.time == pytest.approx(inv, rel=1e-10, abs=1e-12)
    assert alloc.weights == pytest.approx([beta, 1 - beta], abs=1e-12)


def test_gk16_mu1_published_weights() -> None:
    # GK16 §5: w*(μ1) = (0.417, 0.390, 0.136, 0.057); spec: T* ≈ 989.8, β* ≈ 0.417
    alloc = t_star(MU1)
    assert alloc.weights == pytest.approx([0.417, 0.390, 0.136, 0.057], abs=6e-4)
    assert alloc.beta == pytest.approx(0.417, abs=6e-4)
    assert alloc.time == pytest.approx(989.8, abs=0.05)
    half = t_star_beta(MU1, 0.5)
    assert half.time == pytest.approx(1019.4, abs=0.05)
    assert half.weights == pytest.approx([0.5, 0.322, 0.125, 0.054], abs=6e-4)


def test_gk16_mu2_published_weights() -> None:
    # GK16 §5 quotes w*(μ2) = [0.336 0.251 0.177 0.132 0.104]
    alloc = t_star(MU2)
    assert alloc.weights == pytest.approx([0.336, 0.251, 0.177, 0.132, 0.104], abs=6e-4)


@pytest.mark.parametrize("beta", [0.2, 0.5, 0.8])
def test_costs_are_equalized_at_the_optimum(beta: float) -> None:
    alloc = t_star_beta(MU2, beta)
    c = costs_at(MU2, alloc.weights)
    assert np.ptp(c) < 1e-9
    assert c[0] == pytest.approx(1.0 / alloc.time, rel=1e-9)
    assert alloc.weights.sum() == pytest.approx(1.0, abs=1e-12)


def test_batch_solver_matches_scalar_and_bounds_hold() -> None:
    rng = np.random.default_rng(3)
    mus = []
    while len(mus) < 6:
        mu = rng.uniform(0.05, 0.95, 4)
        if np.sort(mu)[-1] - np.sort(mu)[-2] > 0.05:
            mus.append(mu)
    w_batch, t_batch = optimal_weights_batch(np.array(mus))
    for mu, w, t in zip(mus, w_batch, t_batch, strict=False):
        ref = t_star(mu)
        assert t == pytest.approx(ref.time, rel=1e-5)
        assert w == pytest.approx(ref.weights, abs=1e-4)
        # T*_β ≥ T* (computed by the independent GK16 procedure) and T*_{1/2} ≤ 2·T* (Russo 2016)
        for beta in (0.1, 0.3, 0.5, 0.7, 0.9):
            assert t_star_beta(mu, beta).time >= t * (1 - 1e-6)
        assert t_star_beta(mu, 0.5).time <= 2.0 * t


def test_batch_solver_handles_tied_best_arms() -> None:
    w, t = optimal_weights_batch(np.array([[0.5, 0.5, 0.2], [0.6, 0.5, 0.2]]))
    assert w[0] == pytest.approx([1 / 3] * 3)
    assert np.isinf(t[0]) and np.isfinite(t[1])


def test_unique_best_arm_is_required() -> None:
    assert best_arm([0.5, 0.4, 0.4]) == 0
    with pytest.raises(ValueError):
        t_star_beta([0.5, 0.5, 0.4], 0.5)

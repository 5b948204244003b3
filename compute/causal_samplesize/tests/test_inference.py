"""Sampling moments, Clark's formula and CI behaviour (spec §5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute.causal_samplesize import bounds as B
from compute.causal_samplesize import inference as I
from compute.causal_samplesize import sampling as S
from compute.causal_samplesize.run import kink_theta


def test_simulated_moments_match_sigma() -> None:
    rng = np.random.default_rng(0)
    th = np.array([0.6, 0.35, 0.25, 0.25, 0.15, 0.35])
    reps = 40_000
    x = S.sample_theta(th, 300, 200, 400, reps, rng)
    cov = S.theta_cov(th, 300, 200, 400)
    np.testing.assert_allclose(x.mean(0), th, atol=5 * np.sqrt(np.diag(cov) / reps).max())
    emp = np.cov(x.T)
    # entries agree within 5 Monte Carlo s.e. (s.e. of a covariance ≈ √(σ_i²σ_j² + σ_ij²)/√R)
    se = np.sqrt(np.outer(np.diag(cov), np.diag(cov)) + cov**2) / math.sqrt(reps)
    assert np.all(np.abs(emp - cov) <= 5 * se)
    assert cov[0, 2] == 0.0 and cov[2, 3] == pytest.approx(-0.25 * 0.25 / 400)


def test_covariance_square_root() -> None:
    th = B.theta_from_joint(np.random.default_rng(1).dirichlet(np.ones(8), size=5))
    b = S.theta_cov_sqrt(th, 10, 20, 30)
    np.testing.assert_allclose(b @ np.swapaxes(b, -1, -2), S.theta_cov(th, 10, 20, 30), atol=1e-15)


def test_clark_expected_max_equal_means() -> None:
    rng = np.random.default_rng(2)
    s, rho, mu = 1.3, 0.4, 0.2
    closed = I.clark_expected_max(mu, mu, s, s, rho)
    assert closed == pytest.approx(mu + s * math.sqrt((1 - rho) / math.pi), rel=1e-12)
    cov = [[s**2, rho * s * s], [rho * s * s, s**2]]
    x = rng.multivariate_normal([mu, mu], cov, size=400_000).max(axis=1)
    assert x.mean() == pytest.approx(closed, abs=4 * x.std() / math.sqrt(len(x)))
    # unequal variances and means (general Clark formula)
    cov = [[1.0, 0.3 * 2.0], [0.3 * 2.0, 4.0]]
    x = rng.multivariate_normal([0.5, 0.0], cov, size=400_000).max(axis=1)
    assert x.mean() == pytest.approx(I.clark_expected_max(0.5, 0.0, 1.0, 2.0, 0.3), abs=4 * x.std() / math.sqrt(len(x)))


def test_max_estimator_bias_at_tie_matches_clark() -> None:
    rng = np.random.default_rng(3)
    n, reps = 400, 20_000
    th = kink_theta(0.0)
    ep = B.endpoint("PNS", "lower")
    lhat = ep.value(S.sample_theta(th, n, n, n, reps, rng))
    e1, e0, o11, _, o01, _ = th
    py = o11 + o01
    theta = math.sqrt(e0 * (1 - e0) / n + py * (1 - py) / n)  # sd of (e1 − e0) − (e1 − P(y))
    bias = lhat.mean() - ep.value(th)
    assert bias == pytest.approx(theta / math.sqrt(2 * math.pi), abs=4 * lhat.std() / math.sqrt(reps))


def test_directional_with_no_selection_equals_naive() -> None:
    rng = np.random.default_rng(4)
    th = B.theta_from_joint(rng.dirichlet(np.ones(8)))
    ep = B.endpoint("PNS", "upper")
    thh = S.sample_theta(th, 800, 800, 800, 50, rng)
    lo, hi = I.naive_delta_ci(ep, thh, 800, 800, 800, 1.959963984540054)
    lo2, hi2, size = I.directional_delta_ci(ep, thh, 800, 800, 800, 0.05, rng, draws=8192, kappa=0.0)
    assert np.all(size == 1)
    np.testing.assert_allclose(lo2, lo, atol=0.02 * (hi - lo).max())
    np.testing.assert_allclose(hi2, hi, atol=0.02 * (hi - lo).max())


def test_coverage_at_four_way_tie_naive_dips_directional_restores() -> None:
    rng = np.random.default_rng(5)
    n, reps = 1000, 3000
    th = kink_theta(0.0, "null")  # e1 = e0 = P(y): all four PNS-lower terms equal 0
    ep = B.endpoint("PNS", "lower")
    assert np.allclose(ep.terms(th), 0.0)
    thh = S.sample_theta(th, n, n, n, reps, rng)
    lo, hi = I.naive_delta_ci(ep, thh, n, n, n, 1.959963984540054)
    naive = np.mean((lo <= 0) & (0 <= hi))
    lo, hi, _ = I.directional_delta_ci(ep, thh, n, n, n, 0.05, rng)
    directional = np.mean((lo <= 0) & (0 <= hi))
    lo, hi = I.bootstrap_ci(ep, thh[:500], n, n, n, 0.05, rng, boots=200)
    boot = np.mean((lo <= 0) & (0 <= hi))
    mc = math.sqrt(0.05 * 0.95 / reps)
    assert naive < 0.95 - 2 * mc
    assert directional >= 0.95 - 2 * mc
    assert boot < 0.9  # the percentile bootstrap is inconsistent at exact ties


def test_conservative_directional_covers_near_tie_where_pure_directional_fails() -> None:
    rng = np.random.default_rng(6)
    n, reps = 1000, 2000
    th = kink_theta(0.02, "null")  # L = 0.02 with the constant 0 and e1 − e0 trailing by 0.02 (≈ 1 s.d.)
    ep = B.endpoint("PNS", "lower")
    lval = ep.value(th)
    thh = S.sample_theta(th, n, n, n, reps, rng)
    lo, hi, _ = I.directional_delta_ci(ep, thh, n, n, n, 0.05, rng)
    pure = np.mean((lo <= lval) & (lval <= hi))
    lo, hi, _ = I.directional_delta_ci(ep, thh, n, n, n, 0.05, rng, conservative=True)
    cons = np.mean((lo <= lval) & (lval <= hi))
    mc = math.sqrt(0.05 * 0.95 / reps)
    assert pure < 0.9  # hard selection keeps the point-mass term 0 and pulls the interval below L
    assert cons >= 0.95 - 2 * mc


def test_m_out_of_n_bootstrap_restores_coverage_at_four_way_tie() -> None:
    rng = np.random.default_rng(7)
    n, reps = 1000, 600
    th = kink_theta(0.0, "null")
    ep = B.endpoint("PNS", "lower")
    thh = S.sample_theta(th, n, n, n, reps, rng)
    lo, hi = I.m_out_of_n_bootstrap_ci(ep, thh, n, n, n, 0.05, rng, boots=200)
    mofn = np.mean((lo <= 0) & (0 <= hi))
    lo, hi = I.bootstrap_ci(ep, thh, n, n, n, 0.05, rng, boots=200)
    boot = np.mean((lo <= 0) & (0 <= hi))
    mc = math.sqrt(0.05 * 0.95 / reps)
    assert mofn >= 0.95 - 3 * mc
    assert boot < 0.9 < mofn


def test_m_out_of_n_matches_delta_width_for_a_smooth_endpoint() -> None:
    # one active term far from the others: the √m-rescaled subsample law is the delta-method normal
    rng = np.random.default_rng(8)
    th = np.array([0.8, 0.2, 0.3, 0.2, 0.2, 0.3])
    ep = B.endpoint("PNS", "lower")  # max{0, .6, .3, .3}: e1 − e0 leads by 0.3 ≈ 8 s.d. even at m = n^(2/3)
    np.testing.assert_allclose(ep.terms(th), [0.0, 0.6, 0.3, 0.3])
    n = 4000
    thh = S.sample_theta(th, n, n, n, 300, rng)
    lo, hi = I.m_out_of_n_bootstrap_ci(ep, thh, n, n, n, 0.05, rng, boots=400)
    lo_d, hi_d = I.naive_delta_ci(ep, thh, n, n, n, 1.959963984540054)
    assert np.mean(hi - lo) == pytest.approx(np.mean(hi_d - lo_d), rel=0.1)
    assert I.m_out_of_n_fraction(1000, 2000, 1000) == pytest.approx(1000 ** (-1 / 3))
    with pytest.raises(ValueError):
        I.m_out_of_n_fraction(10, 10, 10, gamma=1.0)

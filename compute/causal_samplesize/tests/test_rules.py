"""Formula outputs against hand computations (spec §5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from compute.causal_samplesize import bounds as B
from compute.causal_samplesize import lp
from compute.causal_samplesize import rules as R
from compute.causal_samplesize.run import ratio_theta


def test_distribution_free_pns_hand_computation() -> None:
    z = stats.norm.ppf(0.975)
    a = R.Allocation(1.0)
    lower = R.design("PNS", "lower", "distribution_free", 0.05, 0.95, a)[0]
    upper = R.design("PNS", "upper", "distribution_free", 0.05, 0.95, a)[0]
    assert lower.n_arm == math.ceil(z**2 / (2 * 0.05**2))
    assert upper.n_arm == math.ceil(3 * z**2 / (4 * 0.05**2))
    assert lower.n_o == lower.n_arm and upper.n_e_total == 2 * upper.n_arm
    # both endpoints jointly: Bonferroni z_{1−α/4}
    both = R.design("PNS", "both", "distribution_free", 0.05, 0.95, a)
    zb = stats.norm.ppf(1 - 0.05 / 4)
    assert both[1].n_exact == pytest.approx(3 * zb**2 / (4 * 0.05**2), rel=1e-12)


def test_n_scales_as_inverse_eps_squared_and_z_squared() -> None:
    a = R.Allocation(1.0)
    th = np.array([0.6, 0.35, 0.25, 0.25, 0.15, 0.35])
    for rule in ("distribution_free", "plugin_active"):
        n1 = R.design("PNS", "lower", rule, 0.05, 0.95, a, theta=th)[0].n_exact
        n2 = R.design("PNS", "lower", rule, 0.025, 0.95, a, theta=th)[0].n_exact
        if rule == "distribution_free":  # the gap-adjusted plug-in is not a pure 1/ε² law
            assert n2 / n1 == pytest.approx(4.0, rel=1e-12)
            n3 = R.design("PNS", "lower", rule, 0.05, 0.99, a, theta=th)[0].n_exact
            zr = stats.norm.ppf(0.995) / stats.norm.ppf(0.975)
            assert n3 / n1 == pytest.approx(zr**2, rel=1e-12)
        else:  # the union-bound plug-in grows with the confidence and shrinks with ε
            assert n2 > 3.0 * n1
            assert R.design("PNS", "lower", rule, 0.05, 0.99, a, theta=th)[0].n_exact > n1


def test_allocation_basis_and_rounding() -> None:
    assert R.Allocation(2.0, "per_arm").r_o == 2.0
    assert R.Allocation(2.0, "total").r_o == 4.0
    assert R.Allocation(0.5).sizes(100.2) == (101, 202, 51)
    # observational variance term shrinks with r_o: upper PNS term e1 − e0 + o10 + o01 → 1/4 + 1/4 + 1/(4 r_o)
    v = R.popoviciu_variances(B.endpoint("PNS", "upper"), R.Allocation(2.0))
    assert v[3] == pytest.approx(0.25 + 0.25 + 0.25 / 2)


def test_popoviciu_bounds_exact_variance() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        th = B.theta_from_joint(rng.dirichlet(np.ones(8)))
        alloc = R.Allocation(float(rng.uniform(0.1, 10)))
        for side in ("lower", "upper"):
            ep = B.endpoint("PNS", side)
            assert np.all(R.popoviciu_variances(ep, alloc) >= R.term_variances(ep, th, alloc) - 1e-15)
    fam = lp.Family(3, 3, "PNS")
    for _ in range(50):
        b = fam.data_from_joint(fam.random_joint(rng))
        g = rng.standard_normal(len(b))
        assert lp.popoviciu_variance(fam, g) >= g @ lp.per_obs_covariance(fam, b) @ g - 1e-12


def test_plugin_hand_computation_single_active_term() -> None:
    # PNS upper at θ: terms e1=.3, 1−e0=.9, o11+o00=.7, e1−e0+o10+o01=.7 → e1 active, others ≥ .4 away
    th = np.array([0.3, 0.1, 0.2, 0.3, 0.1, 0.4])
    z = stats.norm.ppf(0.975)
    d = R.design("PNS", "upper", "plugin_active", 0.05, 0.95, R.Allocation(1.0), theta=th)[0]
    assert d.active == "e1"
    # the other terms are ≥ 0.4 away: their tail terms in the union bound are negligible (< 1e-12)
    assert d.n_exact == pytest.approx(z**2 * 0.3 * 0.7 / 0.05**2, rel=1e-8)


def test_plugin_union_bound_at_exact_tie() -> None:
    # PNS upper with e1 = o11 + o00 (two-way tie, others far): n solves Φ̄(ε√n/σ1) + Φ̄(ε√n/σ2) + min(...) = α
    th = np.array([0.6, 0.2, 0.3, 0.3, 0.1, 0.3])
    ep = B.endpoint("PNS", "upper")
    a = R.Allocation(1.0)
    t = ep.terms(th)
    assert t[0] == pytest.approx(t[2]) and min(t[1], t[3]) > t[0] + 0.1
    n = R.design("PNS", "upper", "plugin_active", 0.05, 0.95, a, theta=th)[0].n_exact
    s1, s2 = math.sqrt(0.6 * 0.4), math.sqrt(0.6 * 0.4)  # Var(ê1) and Var(ô11 + ô00) per observation
    miss = 2 * stats.norm.sf(0.05 * math.sqrt(n) / s1) + stats.norm.sf(0.05 * math.sqrt(n) / s2)
    assert miss == pytest.approx(0.05, rel=1e-6)
    assert n > stats.norm.ppf(0.975) ** 2 * 0.24 / 0.05**2  # a tie needs more than the single-term formula


def test_ratio_rule_scales_as_inverse_square_of_p_xy() -> None:
    a = R.Allocation(1.0)
    s = np.array([0.005, 0.01, 0.02])
    n = [R.design("PN", "lower", "plugin_active", 0.05, 0.95, a, theta=ratio_theta(x))[0].n_exact for x in s]
    slope = np.polyfit(np.log(s), np.log(n), 1)[0]
    assert slope == pytest.approx(-2.0, abs=0.05)


def test_distribution_free_rejects_ratio_endpoints_and_baseline_raises() -> None:
    with pytest.raises(ValueError, match="affine"):
        R.design("PN", "lower", "distribution_free", 0.05, 0.95, R.Allocation())
    with pytest.raises(R.BaselineNotImplemented):
        R.design("PNS", "lower", "baseline", 0.05, 0.95, R.Allocation())
    th = np.array([0.5, 0.5, 0.0, 0.5, 0.25, 0.25])
    with pytest.raises(ValueError, match="denominator"):
        R.design("PN", "lower", "plugin_active", 0.05, 0.95, R.Allocation(), theta=th)


def test_safe_pilot_rule_covers_true_requirement() -> None:
    rng = np.random.default_rng(5)
    th = ratio_theta(0.2)
    a = R.Allocation(1.0)
    n_true = R.design("PN", "lower", "plugin_active", 0.05, 0.95, a, theta=th)[0].n_exact
    covered, naive_low = 0, 0
    trials = 12
    for _ in range(trials):
        pil = R.sample_pilot(th, 200, 200, rng)
        lo, hi = pil.box(0.1)
        safe = R.design("PN", "lower", "plugin_safe", 0.05, 0.95, a, pilot=pil, alpha_p=0.1)[0].n_exact
        naive = R.design("PN", "lower", "plugin_pilot", 0.05, 0.95, a, pilot=pil)[0].n_exact
        assert safe >= naive - 1e-6  # the pilot point lies in its own box
        if np.all((lo <= th) & (th <= hi)):
            assert safe >= n_true * (1 - 1e-9)  # the guarantee: truth in box ⇒ n_safe ≥ n(θ_true)
        covered += safe >= n_true
        naive_low += naive < n_true
    assert covered / trials >= 10 / 12
    assert naive_low > 0  # the naive plug-in undershoots the true requirement on some pilots


def test_clopper_pearson_box_matches_scipy_exact_interval() -> None:
    pil = R.Pilot(30, 100, 0, 50, (10, 20, 30, 40))
    lo, hi = pil.box(0.06)
    ci = stats.binomtest(30, 100).proportion_ci(confidence_level=1 - 0.01, method="exact")
    assert lo[0] == pytest.approx(ci.low, rel=1e-9) and hi[0] == pytest.approx(ci.high, rel=1e-9)
    assert lo[1] == 0.0

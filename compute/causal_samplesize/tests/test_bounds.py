"""Known answers for the Tian–Pearl bounds and the LP bounds (spec §5)."""

from __future__ import annotations

import numpy as np
import pytest

from compute.causal_samplesize import bounds as B
from compute.causal_samplesize import lp


def test_truth_inside_bounds_2000_dirichlet_draws() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(8), size=2000)
    th = B.theta_from_joint(p)
    truth = B.true_poc(p)
    for fam in B.FAMILIES:
        lo, hi = B.tian_pearl(th, fam)
        assert np.all(lo <= truth[fam] + 1e-12), fam
        assert np.all(truth[fam] <= hi + 1e-12), fam
    assert np.all(B.consistent(th, tol=1e-12))


def test_mueller_pearl_drug_example_judeasrx_inputs() -> None:
    # Female: E(y|do(x))=.48, E(y|do(x'))=.21, P(y|x)=.27, P(y|x')=.7, P(x)=.7 -> PNS in [.27, .279], PN = 1
    th = B.from_conditionals(0.48, 0.21, 0.27, 0.7, 0.7)
    lo, hi = B.tian_pearl(th, "PNS")
    assert lo == pytest.approx(0.27, abs=1e-12) and hi == pytest.approx(0.279, abs=1e-12)
    lo, hi = B.tian_pearl(th, "PN")
    assert lo == pytest.approx(1.0, abs=1e-12) and hi == pytest.approx(1.0, abs=1e-12)
    # Male: .49, .21, .7, .7, .7 -> PNS = .49 exactly
    lo, hi = B.tian_pearl(B.from_conditionals(0.49, 0.21, 0.7, 0.7, 0.7), "PNS")
    assert lo == pytest.approx(0.49, abs=1e-12) and hi == pytest.approx(0.49, abs=1e-12)


@pytest.mark.parametrize("family", B.FAMILIES)
def test_lp_equals_closed_forms(family: str) -> None:
    rng = np.random.default_rng(1)
    fam = lp.binary_family(family)
    for _ in range(25):
        th = B.theta_from_joint(rng.dirichlet(np.ones(8)))
        b = lp.binary_b_from_theta(th)
        lo, hi = B.tian_pearl(th, family)
        assert lp.lp_bound(fam, b, "lower").value == pytest.approx(lo, abs=1e-9)
        assert lp.lp_bound(fam, b, "upper").value == pytest.approx(hi, abs=1e-9)


def test_binary_lp_data_map_matches_joint() -> None:
    rng = np.random.default_rng(2)
    fam = lp.binary_family("PNS")
    # the LP cells are (x, y_{x=0}, y_{x=1}); bounds.cell_index uses (x, y_1, y_0)
    q = rng.dirichlet(np.ones(8))
    p = np.zeros(8)
    for i, (x, y0, y1) in enumerate(fam.cells):
        p[B.cell_index(x, y1, y0)] = q[i]
    np.testing.assert_allclose(fam.data_from_joint(q), lp.binary_b_from_theta(B.theta_from_joint(p)), atol=1e-15)
    assert fam.true_value(q) == pytest.approx(B.true_poc(p)["PNS"], abs=1e-15)


@pytest.mark.parametrize("query", ["PNS", "PN", "PS"])
def test_multivalued_truth_inside_lp_bounds(query: str) -> None:
    rng = np.random.default_rng(3)
    fam = lp.Family(3, 3, query, xa=2, ya=1, xb=0, yb=2)
    for _ in range(5):
        q = fam.random_joint(rng)
        b = fam.data_from_joint(q)
        lo, hi = lp.lp_bound(fam, b, "lower").value, lp.lp_bound(fam, b, "upper").value
        assert lo - 1e-9 <= fam.true_value(q) <= hi + 1e-9
        assert 0 - 1e-12 <= lo <= hi <= 1 + 1e-12


@pytest.mark.parametrize("query", ["PNS", "PN"])
def test_lp_duals_match_finite_differences(query: str) -> None:
    rng = np.random.default_rng(4)
    fam = lp.Family(3, 2, query, xa=1, ya=1, xb=0, yb=0)
    b = fam.data_from_joint(fam.random_joint(rng))
    h = 1e-6
    for side in ("lower", "upper"):
        res = lp.lp_bound(fam, b, side)
        for _ in range(3):
            d = rng.standard_normal(len(b))
            fd = (lp.lp_bound(fam, b + h * d, side).value - lp.lp_bound(fam, b - h * d, side).value) / (2 * h)
            assert res.grad @ d == pytest.approx(fd, rel=1e-4, abs=1e-6)


def test_pn_gradient_matches_finite_differences_and_closed_form() -> None:
    th = np.array([0.6, 0.35, 0.25, 0.25, 0.15, 0.35])
    ep = B.endpoint("PN", "lower")
    g = ep.gradients(th)[1]  # (P(y) − e0)/o11
    o11, o01, e0 = th[B.O11], th[B.O01], th[B.E0]
    assert g[B.O11] == pytest.approx((e0 - o01) / o11**2, rel=1e-12)
    assert g[B.O01] == pytest.approx(1 / o11, rel=1e-12)
    assert g[B.E0] == pytest.approx(-1 / o11, rel=1e-12)
    h = 1e-6
    for fam in B.FAMILIES:
        for side in ("lower", "upper"):
            e = B.endpoint(fam, side)
            num = np.array(
                [(e.terms(th + h * np.eye(6)[i]) - e.terms(th - h * np.eye(6)[i])) / (2 * h) for i in range(6)]
            ).T
            np.testing.assert_allclose(e.gradients(th), num, atol=1e-6)


def test_ratio_denominator_zero_is_nan_not_inf() -> None:
    th = np.array([0.5, 0.5, 0.0, 0.5, 0.25, 0.25])
    assert np.isnan(B.endpoint("PN", "lower").terms(th)[1])


def test_lp_dual_is_the_active_closed_form_term_gradient() -> None:
    # off the simplex Σo = 1 the LP and the closed form may differ by c·(Σo − 1), so compare modulo that direction
    rng = np.random.default_rng(6)
    ones_o = np.array([0, 0, 1, 1, 1, 1], dtype=float) / 2.0
    fam = lp.binary_family("PNS")
    checked = 0
    for _ in range(30):
        th = B.theta_from_joint(rng.dirichlet(np.ones(8)))
        for side in ("lower", "upper"):
            ep = B.endpoint("PNS", side)
            t = np.sort(ep.terms(th))
            if (t[-1] - t[-2] if side == "lower" else t[1] - t[0]) < 1e-3:
                continue  # skip near-ties: the dual is then any convex combination
            k = int(np.argmax(ep.terms(th)) if side == "lower" else np.argmin(ep.terms(th)))
            g = lp.binary_theta_grad(lp.lp_bound(fam, lp.binary_b_from_theta(th), side).grad)
            d = g - ep.gradients(th)[k]
            np.testing.assert_allclose(d - (d @ ones_o) * ones_o, 0.0, atol=1e-9)
            checked += 1
    assert checked > 40


def test_near_active_duals_find_both_pieces_at_a_tie() -> None:
    # kink θ = (.65, .4, .2, .3, .2, .3): PNS lower terms e1 − e0 = e1 − P(y) = .25 tie.  Joint over the LP
    # cells (x, y_{x=0}, y_{x=1}) built by hand to reproduce it.
    fam = lp.binary_family("PNS")
    q = np.array([0.05, 0.25, 0.0, 0.2, 0.2, 0.1, 0.1, 0.1])
    th = np.array([0.65, 0.4, 0.2, 0.3, 0.2, 0.3])
    np.testing.assert_allclose(fam.data_from_joint(q), lp.binary_b_from_theta(th), atol=1e-15)
    rng = np.random.default_rng(7)
    grads = lp.near_active_duals(fam, q, "lower", 0.05, rng, probes=24)
    assert len(grads) >= 2  # both tied pieces show up
    # far from any tie (single active piece, runner-up .2 below) only one piece is found
    q_far = np.array([0.05, 0.45, 0.0, 0.0, 0.3, 0.0, 0.2, 0.0])  # e1 = .65, e0 = .05: e1 − e0 = .6 dominates
    b_far = fam.data_from_joint(q_far)
    t = np.sort(B.endpoint("PNS", "lower").terms(lp.binary_theta_grad(b_far)))
    assert t[-1] - t[-2] > 0.15
    assert len(lp.near_active_duals(fam, q_far, "lower", 0.05, rng, probes=24)) == 1

"""Known answers for kl, the transportation cost W, leader/challenger rules and thresholds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute.toptwo_bai.rules import (
    challenger,
    forced_exploration_budget,
    glr_statistic,
    kl_bernoulli,
    kl_fast,
    leader_costs,
    random_argmax,
    threshold,
    transportation_cost,
)


def test_kl_is_zero_on_the_diagonal() -> None:
    p = np.linspace(0.0, 1.0, 11)
    assert np.allclose(kl_bernoulli(p, p), 0.0, atol=1e-10)


@pytest.mark.parametrize(
    ("p", "q", "expected"),
    [
        (0.5, 0.25, 0.5 * math.log(4.0 / 3.0)),  # ½log 2 + ½log(2/3)
        (0.0, 0.3, -math.log(0.7)),  # 0·log 0 = 0
        (1.0, 0.3, -math.log(0.3)),
        (0.7, 0.5, 0.7 * math.log(1.4) + 0.3 * math.log(0.6)),
    ],
)
def test_kl_closed_forms(p: float, q: float, expected: float) -> None:
    assert float(kl_bernoulli(p, q)) == pytest.approx(expected, abs=1e-12)
    assert float(kl_fast(np.array(p), np.array(q))) == pytest.approx(expected, abs=1e-11)


def test_kl_fast_matches_xlogy_version() -> None:
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.random(500), [0.0, 1.0, 0.0, 1.0]])
    q = np.concatenate([rng.random(500), [0.2, 0.7, 1.0, 0.0]])
    assert np.allclose(kl_fast(p, q), kl_bernoulli(p, q), rtol=1e-10, atol=1e-10)


def test_transportation_cost_zero_unless_i_beats_j_and_linear_in_counts() -> None:
    assert transportation_cost(0.4, 10.0, 0.5, 20.0) == 0.0
    assert transportation_cost(0.4, 10.0, 0.4, 20.0) == 0.0
    w = transportation_cost(0.6, 10.0, 0.45, 7.0)
    assert w > 0
    for c in (2.0, 13.5):  # fixed means: W(c·N) = c·W(N)
        assert transportation_cost(0.6, c * 10.0, 0.45, c * 7.0) == pytest.approx(c * w, rel=1e-12)


def test_two_arm_statistic_equals_hand_computed_glr() -> None:
    # N = (10, 10), S = (7, 3): μ̂ = (0.7, 0.3), pooled u = 0.5.
    # GLR = log sup_{μ} L − log sup_{μ1=μ2} L = Σ S ln μ̂ + F ln(1−μ̂) − 20·ln ½ = 20·(0.7 ln 1.4 + 0.3 ln 0.6)
    hand = 20.0 * (0.7 * math.log(1.4) + 0.3 * math.log(0.6))
    assert hand == pytest.approx(1.645658, abs=1e-6)
    loglik = 7 * math.log(0.7) + 3 * math.log(0.3) + 3 * math.log(0.3) + 7 * math.log(0.7) - 20 * math.log(0.5)
    assert loglik == pytest.approx(hand, rel=1e-12)
    mu_hat = np.array([[0.7, 0.3]])
    counts = np.array([[10.0, 10.0]])
    costs = leader_costs(mu_hat, counts, np.array([0]))
    assert glr_statistic(costs)[0] == pytest.approx(hand, rel=1e-12)


def test_leader_costs_match_the_kl_form_and_are_zero_for_tied_leader() -> None:
    rng = np.random.default_rng(1)
    counts = rng.integers(1, 500, size=(50, 5)).astype(float)
    mu_hat = rng.integers(0, 500, size=(50, 5)) % (counts.astype(int) + 1) / counts
    leader = np.argmax(mu_hat, axis=1)
    fast = leader_costs(mu_hat, counts, leader)
    rows = np.arange(50)
    ref = transportation_cost(mu_hat[rows, leader][:, None], counts[rows, leader][:, None], mu_hat, counts)
    ref[rows, leader] = np.inf
    assert np.allclose(fast, ref, rtol=1e-9, atol=1e-9)
    # a tie with the leader gives Z = 0: the run must not stop
    tied = leader_costs(np.array([[0.5, 0.5, 0.2]]), np.array([[10.0, 30.0, 5.0]]), np.array([0]))
    assert glr_statistic(tied)[0] == 0.0


def test_random_argmax_breaks_ties_uniformly() -> None:
    rng = np.random.default_rng(2)
    vals = np.tile([0.3, 0.5, 0.5, 0.1], (20_000, 1))
    picks = random_argmax(vals, rng.random(vals.shape))
    share = np.bincount(picks, minlength=4) / len(picks)
    assert share[0] == share[3] == 0.0
    assert abs(share[1] - 0.5) < 0.015  # 4.2 binomial standard deviations


def test_tci_penalty_changes_the_challenger() -> None:
    # leader 0; W(0,1) = 1.0 with N_1 = 1000, W(0,2) = 2.0 with N_2 = 10:
    # TC picks argmin W = 1; TCI picks argmin W + log N = 2 (1 + 6.91 > 2 + 2.30)
    costs = np.array([[np.inf, 1.0, 2.0]])
    counts = np.array([[500.0, 1000.0, 10.0]])
    noise = np.full((1, 3), 0.5)
    assert challenger(costs, counts, noise, penalized=False)[0] == 1
    assert challenger(costs, counts, noise, penalized=True)[0] == 2


def test_thresholds() -> None:
    assert float(threshold(100, 0.01, 4, "heuristic")) == pytest.approx(math.log((1 + math.log(100)) / 0.01))
    assert float(threshold(100, 0.01, 4, "gk16")) == pytest.approx(math.log(2 * 100 * 3 / 0.01))
    assert float(forced_exploration_budget(100, 4)) == pytest.approx(24.0)
    with pytest.raises(ValueError):
        threshold(100, 0.01, 4, "nope")

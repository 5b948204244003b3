"""Metrics with hand-computed answers."""

import math

import numpy as np

from compute.progression.metrics import (
    adjusted_rand_index,
    kmeans,
    monotonicity,
    normalized_mutual_info,
    phm_score,
    prognosability,
    rmse,
    trendability,
)


def test_phm_score_known_values() -> None:
    assert abs(phm_score(np.array([-13.0, 10.0]), np.zeros(2)) - 2 * (math.e - 1)) < 1e-12  # 3.4366
    assert phm_score(np.array([5.0]), np.array([5.0])) == 0.0
    assert rmse(np.array([3.0, 0.0]), np.array([0.0, 4.0])) == math.sqrt(12.5)


def test_indicator_quality() -> None:
    assert monotonicity(np.arange(10.0)) == 1.0
    assert monotonicity(-(np.arange(10.0) ** 2)) == 1.0
    assert monotonicity(np.array([0, 1, 0, 1, 0.0])) == 0.0
    lines = [np.linspace(0, 1, n) for n in (50, 80, 120)]
    assert abs(trendability(lines) - 1.0) < 1e-9
    assert abs(prognosability(lines) - 1.0) < 1e-12  # identical failure value: exp(0)


def test_clustering_agreement() -> None:
    a = np.array([0, 0, 1, 1, 2, 2])
    assert adjusted_rand_index(a, a) == 1.0 and adjusted_rand_index(a, (a + 1) % 3) == 1.0
    assert abs(normalized_mutual_info(a, 2 - a) - 1.0) < 1e-12
    # hand-computed ARI for a = [0,0,1,1], b = [0,0,0,1]: sum C(nij,2) = 1, E = 2*3/6 = 1, max = (2+3)/2
    assert abs(adjusted_rand_index(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 1])) - 0.0) < 1e-12
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.1, (50, 2)) for c in ((0, 0), (5, 5), (0, 5))])
    truth = np.repeat([0, 1, 2], 50)
    assert adjusted_rand_index(kmeans(X, 3, rng), truth) == 1.0

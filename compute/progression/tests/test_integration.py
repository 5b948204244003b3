"""Micro training runs: the compass tracks progression (spec Sec. 5 "Integration")."""

import numpy as np

from compute.progression.config import StepConfig
from compute.progression.data import Dataset, Unit, make_dataset
from compute.progression.metrics import spearman
from compute.progression.preprocess import prepare
from compute.progression.run import compass_quality, train_step


def test_micro_run_compass_tracks_damage() -> None:
    """20 FD001-like units, 5 epochs: median per-unit Spearman(theta, 1 - h) on held-out units > 0.8,
    start windows within 20 degrees of e1 and end windows within 30 degrees of e2 (spec: ~0 and ~90 deg)."""
    prep = prepare(make_dataset("fd001", 20, seed=0, n_holdout=8), 10)
    fit = train_step(prep, StepConfig(n_units=20, epochs=5), None)
    q = compass_quality(fit, prep.holdout)
    assert q["median_spearman"] > 0.8
    assert q["start_to_e1_deg"] < 20 and q["end_to_e2_deg"] < 30


def _linear_units(n: int, rng: np.random.Generator) -> list[Unit]:
    units = []
    for _ in range(n):
        T = int(rng.integers(100, 160))
        h = 1.0 - np.arange(T + 1) / T  # linear degradation, h(T) = 0
        load = np.array([1.0, -0.8, 0.6, 0.5, -1.2, 0.9])
        X = np.outer(1.0 - h, load) + rng.normal(0, 0.05, (T + 1, 6))
        units.append(Unit(X, h, T - np.arange(T + 1, dtype=float), np.zeros(T + 1, int), T))
    return units


def test_indicator_of_linear_degradation_is_monotone_in_time() -> None:
    rng = np.random.default_rng(0)
    ds = Dataset("linear", _linear_units(14, rng), _linear_units(4, rng), holdout=_linear_units(6, rng))
    prep = prepare(ds, 10)
    fit = train_step(prep, StepConfig(n_units=14, epochs=4), None)
    W, th = prep.holdout, fit.theta["holdout"]
    for u in range(W.n_units):
        rows = W.rows(u)
        assert spearman(th[rows], W.t[rows]) > 0.9
        smooth = np.convolve(th[rows], np.ones(10) / 10, mode="valid")
        assert smooth[-1] - smooth[0] > np.radians(60)  # it actually sweeps towards the end state

"""Generators and preprocessing: known answers of the health model, splits and scaling."""

import numpy as np
import pytest

from compute.progression.data import CONSTANT_SENSORS, cmapss_like, health_curve, make_dataset
from compute.progression.preprocess import prepare


@pytest.mark.parametrize("T,d0,b", [(120, 0.0, 1.2), (200, 0.03, 1.7), (360, 0.05, 2.0)])
def test_health_curve_endpoints_and_monotone(T: int, d0: float, b: float) -> None:
    h = health_curve(T, d0, b)
    assert abs(h[0] - (1 - d0)) < 1e-12  # h(0) = 1 - d0
    assert abs(h[T]) < 1e-9  # h(T) = 0
    assert np.all(np.diff(h) <= 0)  # non-increasing


@pytest.mark.parametrize("source", ["fd001", "fd004", "neural", "reacher", "reacher_mujoco", "pump"])
def test_units_health_monotone_rul_is_time_to_failure(source: str) -> None:
    if source == "pump":
        pytest.importorskip("progpy")
    if source == "reacher_mujoco":
        pytest.importorskip("gymnasium")
        pytest.importorskip("mujoco")
    ds = make_dataset(source, 6, seed=3, n_holdout=2)
    for u in ds.train + ds.holdout:
        assert np.all(np.diff(u.health) <= 1e-12)
        assert abs(u.health[-1]) < 1e-9 and len(u.health) == u.T + 1
        np.testing.assert_array_equal(u.rul, u.T - np.arange(u.T + 1))
    for u in ds.test:  # truncated at a life fraction in [0.3, 0.95] (at least 40 cycles), true RUL kept
        assert 0.3 * u.T - 1 <= len(u.health) <= 0.95 * u.T + 1 or len(u.health) == 40
        assert u.rul[-1] == u.T - (len(u.rul) - 1) > 0


def test_constant_channels_and_conditions() -> None:
    ds = cmapss_like("fd002", 5, 5, seed=0)
    for u in ds.train:
        for c in np.unique(u.condition):  # flat channels are constant within an operating condition
            assert np.all(np.ptp(u.sensors[u.condition == c][:, CONSTANT_SENSORS], axis=0) == 0.0)
    assert len(np.unique(np.concatenate([u.condition for u in ds.train]))) == 6
    single = cmapss_like("fd001", 5, 5, seed=0)
    S = np.concatenate([u.sensors for u in single.train])
    assert np.all(np.ptp(S[:, CONSTANT_SENSORS], axis=0) == 0.0)


def test_train_test_disjoint_and_seeded() -> None:
    a, b = cmapss_like("fd003", 8, 8, seed=1), cmapss_like("fd003", 8, 8, seed=1)
    np.testing.assert_array_equal(a.train[0].sensors, b.train[0].sensors)  # deterministic per seed
    train_starts = {u.sensors[0].tobytes() for u in a.train}
    assert not any(u.sensors[0].tobytes() in train_starts for u in a.test)
    assert {u.fault_mode for u in a.train} == {0, 1}


def test_prepare_drops_flat_channels_scales_on_train_and_caps_windows() -> None:
    ds = cmapss_like("fd004", 12, 6, seed=2)
    prep = prepare(ds, window=10)
    assert prep.train.X.shape[1:] == (10, 14)  # 21 - 7 flat channels
    assert prep.train.X.min() >= -1e-6 and prep.train.X.max() <= 1 + 1e-6  # MinMax fitted on train
    # windows: one per end time t >= w - 1, stride 1
    assert len(prep.train.X) == sum(u.T + 1 - 9 for u in ds.train)
    # per-condition z-score removes the operating regime: healthy windows of all conditions overlap
    W = prep.train
    early = W.life < 0.2
    means = [W.X[early & (W.condition == c), -1].mean(0) for c in range(6)]
    assert np.ptp(np.stack(means), axis=0).max() < 0.1


def test_pump_health_is_progpy_impeller_event_state() -> None:
    """Pump units start at h = 1 (A = A_0), fail at A <= A_lim, and the flow falls with the impeller area."""
    pytest.importorskip("progpy")
    ds = make_dataset("pump", 3, seed=0)
    for u in ds.train:
        assert u.health[0] == 1.0 and 0.0 < u.health[-2] < 0.02  # event state 1 at start, ~0 before failure
        assert 100 <= u.T <= 600
        assert u.sensors[-20:, 1].mean() < 0.85 * u.sensors[:20, 1].mean()  # Qout drops as A wears


def test_mujoco_reacher_reaches_the_target() -> None:
    """The PD-tracked minimum-jerk reach ends near the target (fingertip-target distance shrinks)."""
    pytest.importorskip("gymnasium")
    pytest.importorskip("mujoco")
    ds = make_dataset("reacher_mujoco", 3, seed=0)
    for u in ds.train:
        assert u.sensors.shape[1] == 12 and u.health[0] == 1.0
        d = np.linalg.norm(u.sensors[:, 8:10], axis=1)  # Reacher-v5 fingertip - target
        assert d[-1] < 0.03 and d[-1] < 0.5 * d[0]

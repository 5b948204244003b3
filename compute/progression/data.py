"""Offline progressive time-series sources (no C-MAPSS archive exists offline; all are design choices).

* ``cmapss_like``: turbofan run-to-failure units following Saxena et al. (PHM 2008)'s exponential wear,
  normalised to a health index h(t) = 1 - d0 - (exp(a t^b) - 1) with h(T) = 0; 21 sensors (7 constant as in
  FD001) + 3 operating settings; FD001..FD004-like variants (1 or 6 conditions, 1 or 2 fault modes).
* ``neural_population``: spike counts of a population whose slow "line-attractor" mode integrates positive
  evidence pulses from 0 to 1 (end state = bound), mixed with a nuisance rotational mode.
* ``reacher_like``: a planar two-link arm tracking a minimum-jerk reach (numpy kinematics; stands in for the
  MuJoCo Reacher; fallback when gymnasium / mujoco are absent); progress = minimum-jerk phase.
* ``reacher_mujoco``: the same minimum-jerk reach executed in MuJoCo by gymnasium's ``Reacher-v5`` with a PD
  controller (needs the optional ``gymnasium`` + ``mujoco`` packages; ``reacher_like`` is the numpy fallback).
* ``pump_progpy``: NASA progpy's centrifugal pump (Daigle & Goebel 2013) run to impeller-wear failure; health =
  progpy's ImpellerWearFailure event state (needs the optional ``progpy`` package).

Every unit carries a monotone non-increasing health index ``h`` with h(end) = 0, its run-to-failure length
``T`` and ``rul = T - t``. Test units are truncated at a life fraction drawn from U(0.3, 0.95).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

N_SENSORS = 21
CONSTANT_SENSORS = (0, 4, 5, 9, 15, 17, 18)  # FD001's flat channels (sensors 1, 5, 6, 10, 16, 18, 19)
SETTING_CENTRES = np.array(  # (altitude kft, Mach, TRA): the six FD002 operating clusters
    [
        [0.0, 0.0, 100.0],
        [10.0, 0.25, 100.0],
        [20.0, 0.70, 100.0],
        [25.0, 0.62, 60.0],
        [35.0, 0.84, 100.0],
        [42.0, 0.84, 100.0],
    ]
)
VARIANTS = {  # name -> (n_conditions, n_fault_modes)
    "fd001": (1, 1),
    "fd002": (6, 1),
    "fd003": (1, 2),
    "fd004": (6, 2),
}


@dataclass
class Unit:
    """One trajectory. Arrays are indexed by cycle t = 0..len-1."""

    sensors: np.ndarray  # (L, n_channels)
    health: np.ndarray  # (L,) h(t), non-increasing, h(T) = 0
    rul: np.ndarray  # (L,) T - t (uncapped)
    condition: np.ndarray  # (L,) operating condition index per cycle
    T: int  # run-to-failure length: failure at cycle T (L = T + 1 for training units)
    fault_mode: int = 0
    settings: np.ndarray | None = None  # (L, 3) operating settings (C-MAPSS-like only)
    d0: float = 0.0


@dataclass
class Dataset:
    """Disjoint run-to-failure training units and truncated test units of one source."""

    name: str
    train: list[Unit]
    test: list[Unit]
    n_conditions: int = 1
    n_fault_modes: int = 1
    constant_channels: tuple[int, ...] = field(default_factory=tuple)
    holdout: list[Unit] = field(default_factory=list)  # extra full run-to-failure units (compass / forecasting)


def health_curve(T: int, d0: float, b: float) -> np.ndarray:
    """h(t) = 1 - d0 - (exp(a t^b) - 1) for t = 0..T, a = ln(2 - d0) / T^b so that h(T) = 0 (Saxena 2008)."""
    t = np.arange(T + 1, dtype=float)
    a = np.log(2.0 - d0) / float(T) ** b
    return 1.0 - d0 - np.expm1(a * t**b)


def _truncate(unit: Unit, rng: np.random.Generator, min_len: int) -> Unit:
    """Cut a test unit at life fraction U(0.3, 0.95); keeps its true RUL."""
    frac = rng.uniform(0.3, 0.95)
    L = max(min_len, int(round(frac * unit.T)))
    sl = slice(0, L)
    return Unit(
        sensors=unit.sensors[sl],
        health=unit.health[sl],
        rul=unit.rul[sl],
        condition=unit.condition[sl],
        T=unit.T,
        fault_mode=unit.fault_mode,
        settings=None if unit.settings is None else unit.settings[sl],
        d0=unit.d0,
    )


def cmapss_like(variant: str, n_train: int, n_test: int, seed: int, n_holdout: int = 0) -> Dataset:
    """C-MAPSS-like units: s_k(t) = mu_k(c_t) + sum_m gamma_{k,m} D_m(t)^{p_k} + sigma_k eps, D = 1 - h.

    The engine-to-engine constants (mu, gamma, p, sigma) depend on the variant only (the "fleet"), the units on
    ``seed``. Seven channels are constant within an operating condition; each of the six conditions shifts
    every mu_k by several noise scales (far more than the degradation), as in FD002/FD004.
    """
    n_cond, n_modes = VARIANTS[variant]
    fleet = np.random.default_rng(1000 + list(VARIANTS).index(variant))
    informative = [k for k in range(N_SENSORS) if k not in CONSTANT_SENSORS]
    mu0 = fleet.uniform(5.0, 50.0, N_SENSORS)
    mu_cond = mu0[None, :] + fleet.normal(0.0, 8.0, (6, N_SENSORS))  # condition shifts
    if n_cond == 1:
        mu_cond = mu_cond[:1]
    sigma = np.zeros(N_SENSORS)
    sigma[informative] = fleet.uniform(0.3, 0.6, len(informative))
    gamma = np.zeros((N_SENSORS, 2))  # mode 0: HPC, mode 1: fan
    signs = fleet.choice([-1.0, 1.0], size=(N_SENSORS, 2))
    gamma[informative, 0] = signs[informative, 0] * fleet.uniform(0.8, 2.5, len(informative))
    gamma[informative, 1] = signs[informative, 1] * fleet.uniform(0.8, 2.5, len(informative))
    # each fault mode leaves some channels untouched (different signatures)
    gamma[informative[:4], 1] = 0.0
    gamma[informative[-4:], 0] = 0.0
    p = np.ones(N_SENSORS)
    p[informative] = fleet.uniform(1.0, 2.0, len(informative))

    rng = np.random.default_rng(seed)

    def make_unit() -> Unit:
        d0 = rng.uniform(0.0, 0.05)
        b = rng.uniform(1.2, 2.0)
        T = int(rng.integers(120, 361))
        h = health_curve(T, d0, b)
        D = np.clip(1.0 - h, 0.0, None)
        mode = int(rng.integers(n_modes))
        cond = rng.integers(n_cond, size=T + 1) if n_cond > 1 else np.zeros(T + 1, dtype=int)
        noise = rng.normal(0.0, 1.0, (T + 1, N_SENSORS)) * sigma
        s = mu_cond[cond] + gamma[:, mode][None, :] * D[:, None] ** p[None, :] + noise
        settings = SETTING_CENTRES[cond if n_cond > 1 else np.zeros(T + 1, dtype=int)]
        settings = settings + rng.normal(0.0, 1e-3, settings.shape) * np.array([1.0, 0.01, 0.0])
        return Unit(s, h, T - np.arange(T + 1, dtype=float), cond, T, mode, settings, d0)

    train = [make_unit() for _ in range(n_train)]
    test = [_truncate(make_unit(), rng, 40) for _ in range(n_test)]
    holdout = [make_unit() for _ in range(n_holdout)]
    return Dataset(variant, train, test, n_cond, n_modes, CONSTANT_SENSORS, holdout)


def neural_population(n_train: int, n_test: int, seed: int, n_holdout: int = 0, n_neurons: int = 24) -> Dataset:
    """Poisson counts y_n(t) ~ Pois(exp(b_n + c_n x(t) + u_n . q(t))), x the line-attractor mode.

    x(t) = cumsum(g)/sum(g) with positive gamma-distributed evidence pulses g (monotone, x(T) = 1);
    q(t) is a nuisance rotation with a per-trial frequency. Health h = 1 - x. Design choice standing in for
    the paper's neural recordings (Vinograd et al.), which are not available offline.
    """
    fleet = np.random.default_rng(2024)
    base = fleet.uniform(0.5, 1.5, n_neurons)
    load_x = fleet.normal(0.0, 1.0, n_neurons)
    load_q = fleet.normal(0.0, 0.5, (n_neurons, 2))
    rng = np.random.default_rng(seed)

    def make_unit() -> Unit:
        T = int(rng.integers(120, 361))
        g = rng.gamma(0.5, 1.0, T)
        x = np.concatenate([[0.0], np.cumsum(g) / g.sum()])
        omega = rng.uniform(0.05, 0.2)
        ph = rng.uniform(0, 2 * np.pi)
        t = np.arange(T + 1)
        q = np.stack([np.cos(omega * t + ph), np.sin(omega * t + ph)], axis=1)
        rate = np.exp(base[None, :] + np.outer(x, load_x) + q @ load_q.T)
        y = rng.poisson(rate).astype(float)
        return Unit(y, 1.0 - x, T - t.astype(float), np.zeros(T + 1, dtype=int), T)

    train = [make_unit() for _ in range(n_train)]
    test = [_truncate(make_unit(), rng, 40) for _ in range(n_test)]
    return Dataset("neural", train, test, holdout=[make_unit() for _ in range(n_holdout)])


def reacher_like(n_train: int, n_test: int, seed: int, n_holdout: int = 0) -> Dataset:
    """Two-link planar arm (links 0.1 m + 0.11 m as in Reacher) following a minimum-jerk reach.

    Progress s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5, tau = t/T; joints q(t) = q0 + s (q1 - q0) + tracking noise.
    Channels: joint cos/sin (4), joint velocities (2), fingertip xy (2), fingertip-to-target vector (2),
    noisy torque proxy (2). Health h = 1 - s. Design choice standing in for MuJoCo Reacher.
    """
    l1, l2 = 0.1, 0.11
    rng = np.random.default_rng(seed)

    def fk(q: np.ndarray) -> np.ndarray:
        return np.stack(
            [
                l1 * np.cos(q[:, 0]) + l2 * np.cos(q[:, 0] + q[:, 1]),
                l1 * np.sin(q[:, 0]) + l2 * np.sin(q[:, 0] + q[:, 1]),
            ],
            axis=1,
        )

    def make_unit() -> Unit:
        T = int(rng.integers(120, 361))
        tau = np.arange(T + 1) / T
        s = 10 * tau**3 - 15 * tau**4 + 6 * tau**5
        q0 = rng.uniform(-np.pi, np.pi, 2)
        q1 = q0 + rng.uniform(0.8, 2.0, 2) * rng.choice([-1.0, 1.0], 2)
        q = q0[None, :] + s[:, None] * (q1 - q0)[None, :] + rng.normal(0, 0.01, (T + 1, 2))
        dq = np.gradient(q, axis=0) * 50.0
        tip = fk(q)
        target = fk(q1[None, :])[0]
        torque = np.gradient(dq, axis=0) * 20.0 + rng.normal(0, 0.05, (T + 1, 2))
        X = np.concatenate([np.cos(q), np.sin(q), dq, tip, target[None, :] - tip, torque], axis=1)
        X = X + rng.normal(0, 0.02, X.shape)
        return Unit(X, 1.0 - s, T - np.arange(T + 1, dtype=float), np.zeros(T + 1, dtype=int), T)

    train = [make_unit() for _ in range(n_train)]
    test = [_truncate(make_unit(), rng, 40) for _ in range(n_test)]
    return Dataset("reacher", train, test, holdout=[make_unit() for _ in range(n_holdout)])


PUMP_OUTPUTS = ("w", "Qout", "Tt", "Tr", "To")
PUMP_NOISE = np.array([0.5, 2e-4, 0.05, 0.05, 0.02])  # measurement noise per output (rad/s, m^3/s, K, K, K)
PUMP_STEP = 1  # progpy steps (dt = 1 s) per recorded cycle


def _pump_model():  # noqa: ANN202 - optional dependency
    try:
        import warnings

        from progpy.models import CentrifugalPumpWithWear
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("source 'pump' needs the optional package progpy (pip install progpy==1.9.0)") from e
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CentrifugalPumpWithWear(process_noise=0, measurement_noise=0)


PUMP_LOAD = {"Tamb": 290.0, "V": 471.2397, "pdisch": 928654.0, "psuc": 239179.0, "wsync": 376.991 * 0.8}


@lru_cache(maxsize=1)
def _pump_warm_state() -> tuple[tuple[str, float], ...]:
    """progpy pump state after 2000 s of operation without wear (past the spin-up transient)."""
    m = _pump_model()
    p = m.parameters
    x0 = {k: float(v) for k, v in p["x0"].items() if k in m.states}
    x0["QLeak"] = -p["cLeak"] * p["ALeak"] * np.sqrt(PUMP_LOAD["pdisch"] - PUMP_LOAD["psuc"])
    x0.update(wA=0.0, wRadial=0.0, wThrust=0.0)
    x = m.StateContainer(x0)
    u = m.InputContainer(PUMP_LOAD)
    for _ in range(2000):
        x = m.next_state(x, u, 1.0)
    return tuple((k, float(np.ravel(x[k])[0])) for k in m.states)


def pump_progpy(n_train: int, n_test: int, seed: int, n_holdout: int = 0) -> Dataset:
    """Centrifugal pump (progpy 1.9 ``CentrifugalPumpWithWear``) run from a warm state to impeller-wear failure.

    Per unit: impeller wear rate wA (life of ~120-360 recorded cycles), slow bearing wear, discharge pressure
    jittered 2 % every second; outputs (w, Qout, Tt, Tr, To) every ``PUMP_STEP`` s plus Gaussian sensor noise.
    Health h = progpy's ImpellerWearFailure event state (A - A_lim) / (A_0 - A_lim), clipped at 0 on the failure
    cycle T (first A <= A_lim); A only decreases (dA/dt = -wA Q^2), so h is non-increasing. Design choice: the
    issue asks for progpy wear models "where it installs"; the load profile and noise levels are ours.
    """
    m = _pump_model()
    warm = dict(_pump_warm_state())
    lim, a0 = m.parameters["lim"]["A"], warm["A"]
    rng = np.random.default_rng(seed)
    jitter = np.random.default_rng(77).normal(0.0, 0.02, 32)  # 2 % discharge-pressure jitter, drawn per second
    loads = [m.InputContainer(dict(PUMP_LOAD, pdisch=PUMP_LOAD["pdisch"] * (1 + e))) for e in jitter]

    def make_unit() -> Unit:
        target = rng.uniform(120, 360) * PUMP_STEP  # seconds to failure at the initial flow
        x0 = dict(warm)
        x0.update(
            wA=(a0 - lim) / (target * warm["Q"] ** 2), wRadial=rng.uniform(0, 2e-11), wThrust=rng.uniform(0, 2e-11)
        )
        x = m.StateContainer(x0)
        rows, hs = [], []
        for _ in range(int(target * 3)):
            v = {k: float(np.ravel(x[k])[0]) for k in ("w", "Q", "QLeak", "Tt", "Tr", "To", "A")}
            es = (v["A"] - lim) / (a0 - lim)  # progpy's ImpellerWearFailure event state
            rows.append([v["w"], max(0.0, v["Q"] - v["QLeak"]), v["Tt"], v["Tr"], v["To"]])
            hs.append(max(es, 0.0))
            if es <= 0.0:
                break
            for j in rng.integers(len(loads), size=PUMP_STEP):
                x = m.next_state(x, loads[j], 1.0)
        h = np.minimum.accumulate(np.array(hs))
        T = len(h) - 1
        h[-1] = 0.0
        X = np.array(rows) + rng.normal(0.0, 1.0, (T + 1, len(PUMP_OUTPUTS))) * PUMP_NOISE
        return Unit(X, h, T - np.arange(T + 1, dtype=float), np.zeros(T + 1, dtype=int), T)

    train = [make_unit() for _ in range(n_train)]
    test = [_truncate(make_unit(), rng, 40) for _ in range(n_test)]
    return Dataset("pump", train, test, holdout=[make_unit() for _ in range(n_holdout)])


def reacher_mujoco(n_train: int, n_test: int, seed: int, n_holdout: int = 0) -> Dataset:
    """gymnasium ``Reacher-v5`` (MuJoCo physics, dt = 0.02 s) driven along a minimum-jerk joint reference.

    Per unit: start joints q0, goal q1 (target placed at the fingertip position of q1), T ~ U{120..360} steps;
    action = clip(0.05 (q_ref - q) + 0.005 (dq_ref - dq) + N(0, 0.02^2), -1, 1) with q_ref = q0 + s(t/T)(q1 - q0).
    Channels: the 10 Reacher-v5 observations (cos q, sin q, target xy, dq, fingertip - target) + the 2 actions.
    Health h = 1 - s(t/T) (task progress), as in ``reacher_like``. Design choice (controller, gains, ranges).
    """
    try:
        import gymnasium as gym
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("source 'reacher_mujoco' needs gymnasium==1.4.0 with mujoco (see docs)") from e
    env = gym.make("Reacher-v5").unwrapped
    env.reset(seed=seed)
    l1, l2 = 0.1, 0.11
    rng = np.random.default_rng(seed)

    def make_unit() -> Unit:
        T = int(rng.integers(120, 361))
        q0 = np.array([rng.uniform(-np.pi, np.pi), rng.uniform(-2.5, 2.5)])
        q1 = q0 + rng.uniform(0.8, 2.0, 2) * rng.choice([-1.0, 1.0], 2)
        q1[1] = np.clip(q1[1], -2.8, 2.8)
        target = np.array([l1 * np.cos(q1[0]) + l2 * np.cos(q1.sum()), l1 * np.sin(q1[0]) + l2 * np.sin(q1.sum())])
        env.set_state(np.r_[q0, target], np.zeros(4))
        tau = np.arange(T + 1) / T
        s = 10 * tau**3 - 15 * tau**4 + 6 * tau**5
        ds = (30 * tau**2 - 60 * tau**3 + 30 * tau**4) / (T * env.dt)
        rows = []
        for k in range(T + 1):
            q, dq = env.data.qpos[:2].copy(), env.data.qvel[:2].copy()
            a = 0.05 * (q0 + s[k] * (q1 - q0) - q) + 0.005 * (ds[k] * (q1 - q0) - dq) + rng.normal(0.0, 0.02, 2)
            a = np.clip(a, -1.0, 1.0)
            obs = env.step(a)[0]
            rows.append(np.r_[obs, a])
        return Unit(np.array(rows), 1.0 - s, T - np.arange(T + 1, dtype=float), np.zeros(T + 1, dtype=int), T)

    train = [make_unit() for _ in range(n_train)]
    test = [_truncate(make_unit(), rng, 40) for _ in range(n_test)]
    holdout = [make_unit() for _ in range(n_holdout)]
    env.close()
    return Dataset("reacher_mujoco", train, test, holdout=holdout)


def make_dataset(source: str, n_units: int, seed: int, n_holdout: int = 0) -> Dataset:
    """Dispatch on the source name; ``n_units`` training units, as many truncated test units, full hold-outs."""
    if source in VARIANTS:
        return cmapss_like(source, n_units, n_units, seed, n_holdout)
    if source == "neural":
        return neural_population(n_units, n_units, seed, n_holdout=n_holdout)
    if source == "reacher":
        return reacher_like(n_units, n_units, seed, n_holdout)
    if source == "reacher_mujoco":
        return reacher_mujoco(n_units, n_units, seed, n_holdout)
    if source == "pump":
        return pump_progpy(n_units, n_units, seed, n_holdout)
    raise ValueError(f"unknown source {source!r}")

"""Known answers of the vehicle models: braking distance, steady cornering, closed forms, loop parity, CommonRoad."""

import math
from dataclasses import replace

import pytest
import torch

from compute.scenefactory.dynamics import (
    VehicleParams,
    kinematic_substep,
    pacejka,
    step,
    step_loop,
    understeer_gradient,
    waymax_substep,
)

P = VehicleParams()
D64 = torch.float64


def _run(
    state: list[float],
    action: list[float],
    mu: float,
    seconds: float,
    p: VehicleParams = P,
    backend: str = "single_track",
):
    """Hold one action for ``seconds`` (0.1 s control steps of 10 × 10 ms sub-steps)."""
    s = torch.tensor([state], dtype=D64)
    acc = torch.zeros(1, 2, dtype=D64)
    a = torch.tensor([action], dtype=D64)
    m = torch.tensor([mu], dtype=D64)
    for _ in range(round(seconds / 0.1)):
        s, acc = step(s, acc, a, m, p, backend, dt=0.1, substeps=10)
    return s[0]


def test_pacejka_odd_with_peak_mu_fz() -> None:
    alpha = torch.linspace(-0.5, 0.5, 2001, dtype=D64)
    f = pacejka(alpha, torch.tensor(4000.0, dtype=D64), torch.tensor(0.8, dtype=D64), P)
    assert torch.allclose(f, -f.flip(0), atol=1e-9)
    assert float(f.max()) == pytest.approx(0.8 * 4000.0, rel=1e-4)
    assert float(f.max()) <= 0.8 * 4000.0 + 1e-9
    # small-slip stiffness B·C·D (CommonRoad's C_S = 20.9 per unit load)
    assert float(
        pacejka(torch.tensor(1e-5, dtype=D64), torch.tensor(1.0, dtype=D64), torch.tensor(1.0, dtype=D64), P)
    ) / 1e-5 == pytest.approx(P.B * P.C, rel=1e-6)


@pytest.mark.parametrize("mu", [1.0, 0.5])
def test_braking_distance(mu: float) -> None:
    """Full brake from 20 m/s stops within 10% of v²/(2μg) (drag and rolling resistance make it a bit shorter)."""
    s = _run([0, 0, 0, 20.0, 0, 0], [0, 0, 1.0], mu, 4.5)
    assert float(s[3]) == 0.0
    assert float(s[0]) == pytest.approx(20.0**2 / (2 * mu * 9.81), rel=0.10)


def test_low_speed_yaw_rate_is_kinematic() -> None:
    delta = 0.1
    s = _run([0, 0, 0, 3.0, 0, 0], [0, delta / P.delta_max, 0], 1.0, 2.0, replace(P, c_roll=0, c_drag=0))
    assert float(s[5]) == pytest.approx(float(s[3]) * math.tan(delta) / P.L, rel=0.05)


@pytest.mark.parametrize("b_rear", [None, 14.0])
def test_steady_state_cornering_matches_understeer_gradient(b_rear: float | None) -> None:
    """At small slip, r = v·δ/(L + K_us·v²) with K_us = m/L·(l_r/C_f − l_f/C_r) (neutral when B_f = B_r)."""
    p = replace(P, B_rear=b_rear, c_roll=0.0, c_drag=0.0)
    delta = 0.02
    s = _run([0, 0, 0, 15.0, 0, 0], [0, delta / p.delta_max, 0], 1.0, 3.0, p)
    v = float(s[3])
    k_us = understeer_gradient(p, 1.0)
    assert float(s[5]) == pytest.approx(v * delta / (p.L + k_us * v**2), rel=0.01)
    if b_rear is not None:
        assert k_us > 0 and float(s[5]) < 0.97 * v * math.tan(delta) / p.L  # understeer is visible


def test_kinematic_closed_form_circle() -> None:
    """GPUDrive bicycle at constant speed: ψ(t) = v cosβ tanδ/L·t and the CoG stays on a circle of radius L/(cosβ tanδ)."""
    p = replace(P, c_roll=0.0, c_drag=0.0, drive_force=0.0)
    delta, v, t = 0.2, 5.0, 2.0
    beta = math.atan(P.l_r * math.tan(delta) / P.L)
    s0 = torch.tensor([[0.0, 0.0, 0.0, v * math.cos(beta), v * math.sin(beta), 0.0]], dtype=D64)
    s = s0
    th, dl, br = torch.zeros(1, dtype=D64), torch.full((1,), delta, dtype=D64), torch.zeros(1, dtype=D64)
    for _ in range(100):
        s, _ = kinematic_substep(s, th, dl, br, p, t / 100)
    omega = v * math.cos(beta) * math.tan(delta) / P.L
    assert float(s[0, 2]) == pytest.approx(omega * t, abs=1e-9)
    radius = P.L / (math.cos(beta) * math.tan(delta))
    cx, cy = -radius * math.sin(beta), radius * math.cos(beta)  # centre is perpendicular to the velocity (ψ+β)
    assert math.hypot(float(s[0, 0]) - cx, float(s[0, 1]) - cy) == pytest.approx(radius, abs=1e-9)


def test_waymax_one_step_closed_form() -> None:
    p = replace(P, c_roll=0.0, c_drag=0.0)
    s = torch.tensor([[1.0, 2.0, 0.3, 10.0, 0.0, 0.0]], dtype=D64)
    th = torch.tensor([0.5], dtype=D64)
    dl = torch.tensor([0.1], dtype=D64)
    out, _ = waymax_substep(s, th, dl, torch.zeros(1, dtype=D64), p, 0.1)
    a = 0.5 * p.drive_force / p.m
    assert float(out[0, 0]) == pytest.approx(1.0 + 10 * math.cos(0.3) * 0.1 + 0.5 * a * math.cos(0.3) * 0.01, abs=1e-12)
    assert float(out[0, 2]) == pytest.approx(0.3 + math.tan(0.1) / p.L * (10 * 0.1 + 0.5 * a * 0.01), abs=1e-12)
    assert float(out[0, 3]) == pytest.approx(10 + a * 0.1, abs=1e-12)


@pytest.mark.parametrize("backend", ["single_track", "two_track"])
def test_batched_step_equals_loop(backend: str) -> None:
    g = torch.Generator().manual_seed(0)
    n = 24
    s = torch.cat(
        [
            torch.rand(n, 3, generator=g, dtype=D64) * 10,
            torch.rand(n, 1, generator=g, dtype=D64) * 20,
            torch.randn(n, 2, generator=g, dtype=D64) * 0.3,
        ],
        1,
    )
    s[:4, 3] = torch.tensor([0.0, 0.5, 1.5, 2.5], dtype=D64)  # include the low-speed blend
    acc = torch.randn(n, 2, generator=g, dtype=D64)
    act = torch.rand(n, 3, generator=g, dtype=D64) * 2 - 1
    mu = torch.rand(n, generator=g, dtype=D64) + 0.3
    for _ in range(5):
        ls, la = step_loop(s.tolist(), acc.tolist(), act.tolist(), mu.tolist(), P, backend == "two_track")
        s, acc = step(s, acc, act, mu, P, backend)
        assert torch.allclose(s, torch.tensor(ls, dtype=D64), atol=1e-6, rtol=0)
        assert torch.allclose(acc, torch.tensor(la, dtype=D64), atol=1e-6, rtol=0)


def _rk4(f, t: float, x: list[float], h: float) -> list[float]:
    k1 = f(t, x)
    k2 = f(t + h / 2, [a + h / 2 * b for a, b in zip(x, k1, strict=False)])
    k3 = f(t + h / 2, [a + h / 2 * b for a, b in zip(x, k2, strict=False)])
    k4 = f(t + h, [a + h * b for a, b in zip(x, k3, strict=False)])
    return [a + h / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(x, k1, k2, k3, k4, strict=False)]


def test_parity_with_commonroad_single_track() -> None:
    """Sinusoidal steer at 15 m/s for 5 s vs CommonRoad's vehicle_dynamics_st (linear tyres, same parameters)."""
    vm = pytest.importorskip("vehiclemodels")
    from vehiclemodels.parameters_vehicle2 import parameters_vehicle2
    from vehiclemodels.vehicle_dynamics_st import vehicle_dynamics_st

    from compute.scenefactory.dynamics import commonroad_params

    assert vm is not None
    pc = parameters_vehicle2()
    ours_p = commonroad_params()
    assert ours_p.m == pytest.approx(P.m) and ours_p.l_f == pytest.approx(P.l_f) and ours_p.I_z == pytest.approx(P.I_z)
    p = replace(P, c_roll=0.0, c_drag=0.0)
    mu = pc.tire.p_dy1
    v0, h, amp, w = 15.0, 0.01, 0.04, 2 * math.pi / 2.5
    x = [0.0, 0.0, 0.0, v0, 0.0, 0.0, 0.0]
    s = torch.tensor([[0.0, 0.0, 0.0, v0, 0.0, 0.0]], dtype=D64)
    acc = torch.zeros(1, 2, dtype=D64)
    m = torch.tensor([mu], dtype=D64)
    for k in range(int(5.0 / h)):
        t = k * h
        x = _rk4(lambda tt, xx: vehicle_dynamics_st(xx, [amp * w * math.cos(w * tt), 0.0], pc), t, x, h)
        a = torch.tensor([[0.0, amp * math.sin(w * (t + 0.5 * h)) / p.delta_max, 0.0]], dtype=D64)
        s, acc = step(s, acc, a, m, p, dt=h, substeps=1)
    assert float(s[0, 1]) == pytest.approx(x[1], abs=0.3)  # lateral displacement ≈ 7 m
    assert float(s[0, 0]) == pytest.approx(x[0], abs=0.6)  # our v_x loses ~1% to F_yf·sinδ; CommonRoad holds v
    assert float(s[0, 2]) == pytest.approx(x[4], abs=0.01)
    assert float(s[0, 5]) == pytest.approx(x[5], abs=0.003)

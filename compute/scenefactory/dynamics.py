"""Vehicle dynamics on ``[..., 6]`` state tensors (x, y, ψ, v_x, v_y, r): dynamic single-track (default), two-track
lateral-transfer option and two kinematic bicycle baselines, plus the scalar per-vehicle loop of the same maths.

Paper §3.2 replaces kinematic agents with articulated PhysX vehicles; here (spec §2) the physics backend is a dynamic
single-track model with load transfer and a Pacejka tyre whose peak D = μF_z is scaled by the per-world road μ:

    α_f = δ − atan2(v_y + l_f r, v_x),  α_r = −atan2(v_y − l_r r, v_x)
    F_zf = m g l_r/L − m a_x h/L,       F_zr = m g l_f/L + m a_x h/L      (a_x of the previous sub-step)
    F_y = D sin(C atan(Bα − E(Bα − atan Bα))),  D = μF_z;  friction ellipse |F| ≤ μF_z per axle
    v̇_x = (F_xr + F_xf cosδ − F_yf sinδ − F_roll − c_d v_x²)/m + v_y r
    v̇_y = (F_yr + F_yf cosδ + F_xf sinδ)/m − v_x r
    ṙ  = (l_f (F_yf cosδ + F_xf sinδ) − l_r F_yr)/I_z

integrated with semi-implicit Euler sub-steps; below 2 m/s the state blends into the kinematic model with weight
clamp(v − 1, 0, 1).  Actions a ∈ [−1, 1]³: throttle = max(a₀, 0), δ = a₁·δ_max, brake = max(a₂, 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

G = 9.81
BACKENDS = ("single_track", "two_track", "kinematic", "waymax")


@dataclass(frozen=True)
class VehicleParams:
    """BMW 320i (CommonRoad ``parameters_vehicle2``) plus tyre/actuator values where CommonRoad is silent (design)."""

    m: float = 1093.2952334674046  # mass [kg]
    I_z: float = 1791.5995300122856  # yaw inertia [kg m²]
    l_f: float = 1.1561957064  # CoG → front axle [m] (CommonRoad a)
    l_r: float = 1.4227170936  # CoG → rear axle [m] (CommonRoad b)
    h: float = 0.61373004  # CoG height used for load transfer [m] (CommonRoad h_s, as in its ST model)
    track: float = 1.38684  # track width t_w [m] (CommonRoad T_f)
    length: float = 4.508
    width: float = 1.61
    # Pacejka: B·C = 20.9 = CommonRoad's C_S = −p_ky1/p_dy1 so the small-slip stiffness matches its ST model
    B: float = 11.0
    B_rear: float | None = None  # rear stiffness factor (None → B; CommonRoad uses one C_S for both axles)
    C: float = 1.9
    E: float = 0.97
    drive_force: float = 4400.0  # F_drive at throttle 1 (≈ 0.4 g) [N] — design
    brake_force: float = 14000.0  # F_brake at brake 1 (≈ 1.3 g, enough to saturate μ ≤ 1.2) [N] — design
    c_roll: float = 0.015  # rolling resistance coefficient — design
    c_drag: float = 0.4  # ½ρC_dA [N s²/m²] — design
    delta_max: float = 0.6  # steering limit [rad] (spec design value)
    roll_front: float = 0.55  # front share of roll stiffness (two-track) — design
    load_sensitivity: float = 0.1  # two-track only: D = μF_z(1 − q(F_z/F_z0 − 1)) — design
    v_floor: float = 1.0  # v_x floor inside atan2 [m/s]
    v_blend_lo: float = 1.0  # kinematic weight 1 below, dynamic weight 1 above v_blend_lo + 1

    @property
    def L(self) -> float:  # noqa: N802 - paper symbol
        return self.l_f + self.l_r


def commonroad_params() -> VehicleParams:
    """VehicleParams read from ``vehiclemodels.parameters_vehicle2`` (if installed) — the source of the defaults."""
    from vehiclemodels.parameters_vehicle2 import parameters_vehicle2

    p = parameters_vehicle2()
    return VehicleParams(m=p.m, I_z=p.I_z, l_f=p.a, l_r=p.b, h=p.h_s, track=p.T_f, length=p.l, width=p.w)


def _atan(x: torch.Tensor) -> torch.Tensor:
    """atan(x) as atan2(x, 1): same function (≤ 1 ulp apart), but ATen's CPU atan2 kernel is SIMD-vectorised and its
    atan is not (≈ 4× slower at a few thousand elements, the single biggest cost of the physics step)."""
    return torch.atan2(x, torch.ones_like(x))


def pacejka(
    alpha: torch.Tensor, fz: torch.Tensor, mu: torch.Tensor, p: VehicleParams, rear: bool = False
) -> torch.Tensor:
    """Magic formula F_y = D sin(C atan(Bα − E(Bα − atan Bα))), D = μF_z (odd in α, peak exactly μF_z)."""
    ba = (p.B_rear if rear and p.B_rear is not None else p.B) * alpha
    return mu * fz * torch.sin(p.C * _atan(ba - p.E * (ba - _atan(ba))))


def decode_action(action: torch.Tensor, p: VehicleParams) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """a ∈ [−1,1]³ → (throttle ∈ [0,1], steering δ [rad], brake ∈ [0,1])."""
    a = torch.clamp(action, -1.0, 1.0)
    return torch.clamp(a[..., 0], min=0.0), a[..., 1] * p.delta_max, torch.clamp(a[..., 2], min=0.0)


def _resist(vx: torch.Tensor, p: VehicleParams) -> torch.Tensor:
    """Rolling resistance + aerodynamic drag [N] (opposing forward motion)."""
    return p.c_roll * p.m * G * torch.tanh(vx / 0.1) + p.c_drag * vx * torch.abs(vx)


def _axle_lateral(
    alpha: torch.Tensor, fz: torch.Tensor, dfz: torch.Tensor, mu: torch.Tensor, p: VehicleParams, fz0: float, rear: bool
) -> torch.Tensor:
    """Two-track axle: outer/inner wheel loads F_z/2 ± ΔF_z with degressive load sensitivity (design)."""
    total = torch.zeros_like(fz)
    for side in (1.0, -1.0):  # outer / inner wheel
        fw = torch.clamp(0.5 * fz + side * dfz, min=0.0)
        d_scale = 1.0 - p.load_sensitivity * (fw / fz0 - 1.0)
        total = total + pacejka(alpha, fw * d_scale, mu, p, rear)
    return total


def steer_terms(delta: torch.Tensor, p: VehicleParams) -> tuple[torch.Tensor, ...]:
    """(cos δ, sin δ, tan δ, cos β, sin β) with the kinematic slip β = atan(l_r tan δ / L)."""
    td = torch.tan(delta)
    beta = _atan(p.l_r * td / p.L)
    return torch.cos(delta), torch.sin(delta), td, torch.cos(beta), torch.sin(beta)


def single_track_substep(
    s: torch.Tensor,
    acc: torch.Tensor,
    throttle: torch.Tensor,
    delta: torch.Tensor,
    brake: torch.Tensor,
    mu: torch.Tensor,
    p: VehicleParams,
    dt: float,
    two_track: bool = False,
    trig: tuple[torch.Tensor, ...] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One semi-implicit Euler sub-step of the dynamic single-track model. s: [...,6], acc: [...,2] = (a_x, a_y).

    ``trig`` = steer_terms(δ) may be passed to reuse cos δ, sin δ, tan δ, cos β, sin β across sub-steps.
    """
    out = _single_track_components((*s.unbind(-1), *acc.unbind(-1)), throttle, delta, brake, mu, p, dt, two_track, trig)
    return torch.stack(out[:6], -1), torch.stack(out[6:], -1)


def _single_track_components(
    c: tuple[torch.Tensor, ...],
    throttle: torch.Tensor,
    delta: torch.Tensor,
    brake: torch.Tensor,
    mu: torch.Tensor,
    p: VehicleParams,
    dt: float,
    two_track: bool = False,
    trig: tuple[torch.Tensor, ...] | None = None,
) -> tuple[torch.Tensor, ...]:
    """:func:`single_track_substep` on the 8 component tensors (x, y, ψ, v_x, v_y, r, a_x, a_y): no stack/unbind
    between sub-steps."""
    # Same equations as the docstring and the scalar twin; written with fused tensor ops (add/sub with alpha,
    # constants folded into Python floats, in-place clamps) because at a few thousand vehicles the eager cost is
    # per-op overhead, not arithmetic.
    x, y, psi, vx, vy, r, ax, ay = c
    L = p.L
    vxf = torch.clamp(vx, min=p.v_floor)
    alpha_f = delta - torch.atan2(torch.add(vy, r, alpha=p.l_f), vxf)
    alpha_r = -torch.atan2(torch.add(vy, r, alpha=-p.l_r), vxf)
    mhl = p.m * p.h / L
    fzf = torch.add(ax, p.m * G * p.l_r / L / -mhl).mul_(-mhl).clamp_(min=0.0)  # m g l_r/L − m a_x h/L
    fzr = torch.add(ax, p.m * G * p.l_f / L / mhl).mul_(mhl).clamp_(min=0.0)  # m g l_f/L + m a_x h/L
    # longitudinal: rear-wheel drive, brake split by axle load (design)
    fb = torch.tanh(vx / 0.05).mul_(brake).mul_(p.brake_force)
    share_f = fzf / torch.clamp(fzf + fzr, min=1e-6)
    fxf = -fb * share_f
    fxr = torch.add(fb * share_f - fb, throttle, alpha=p.drive_force)  # throttle·F_drive − fb·(1 − share_f)
    if two_track:
        dfz = ay * (p.m * p.h / p.track)
        fyf = _axle_lateral(alpha_f, fzf, p.roll_front * dfz, mu, p, 0.25 * p.m * G, False)
        fyr = _axle_lateral(alpha_r, fzr, (1.0 - p.roll_front) * dfz, mu, p, 0.25 * p.m * G, True)
    else:
        fyf = pacejka(alpha_f, fzf, mu, p)
        fyr = pacejka(alpha_r, fzr, mu, p, rear=True)
    # friction ellipse per axle: |F| ≤ μF_z
    muf, mur = mu * fzf, mu * fzr
    kf = torch.clamp(muf / torch.hypot(fxf, fyf).clamp_(min=1e-9), max=1.0)
    kr = torch.clamp(mur / torch.hypot(fxr, fyr).clamp_(min=1e-9), max=1.0)
    fxf, fyf, fxr, fyr = fxf * kf, fyf * kf, fxr * kr, fyr * kr
    cd, sd, td, cb, sb = trig if trig is not None else steer_terms(delta, p)
    front_y = fyf * cd + fxf * sd
    fx_body = fxr + fxf * cd - fyf * sd - _resist(vx, p)
    ax_new = fx_body / p.m
    ay_new = (fyr + front_y) / p.m
    vx_d = torch.clamp(vx + (ax_new + vy * r) * dt, min=0.0)  # no reverse gear
    vy_d = vy + (ay_new - vx * r) * dt
    r_d = torch.add(r, front_y * p.l_f - fyr * p.l_r, alpha=dt / p.I_z)
    # kinematic model for the low-speed blend (reference point CoG); w = 1 (pure dynamic) above v_blend_lo + 1
    v_k = torch.clamp(torch.add(vx, ax_new, alpha=dt), min=0.0)
    w = torch.clamp(vx - p.v_blend_lo, 0.0, 1.0)
    vx_n = torch.lerp(v_k * cb, vx_d, w)
    vy_n = torch.lerp(v_k * sb, vy_d, w)
    r_n = torch.lerp(v_k * cb * td / L, r_d, w)
    cp, sp = torch.cos(psi), torch.sin(psi)
    x_n = x + (vx_n * cp - vy_n * sp) * dt
    y_n = y + (vx_n * sp + vy_n * cp) * dt
    psi_n = torch.remainder(torch.add(psi, r_n, alpha=dt) + math.pi, 2 * math.pi) - math.pi
    return x_n, y_n, psi_n, vx_n, vy_n, r_n, ax_new, ay_new


def _kin_accel(v: torch.Tensor, throttle: torch.Tensor, brake: torch.Tensor, p: VehicleParams) -> torch.Tensor:
    """Kinematic longitudinal acceleration: actuator forces with no grip limit (GPUDrive/Waymax-style)."""
    return (throttle * p.drive_force - brake * p.brake_force * torch.tanh(v / 0.05) - _resist(v, p)) / p.m


def kinematic_substep(
    s: torch.Tensor, throttle: torch.Tensor, delta: torch.Tensor, brake: torch.Tensor, p: VehicleParams, dt: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """GPUDrive-style bicycle: β = atan(l_r tanδ/L), ẋ = v cos(ψ+β), ẏ = v sin(ψ+β), ψ̇ = v cosβ tanδ/L.

    Integrated exactly along the arc for the sub-step's mean speed (so constant-speed motion is the closed-form
    circle of radius L/(cosβ tanδ)).  State stores (v cosβ, v sinβ, ψ̇) as (v_x, v_y, r).
    """
    x, y, psi, vx, vy, _ = s.unbind(-1)
    L = p.L
    v = torch.sqrt(vx**2 + vy**2)
    a = _kin_accel(v, throttle, brake, p)
    v_n = torch.clamp(v + a * dt, min=0.0)
    v_m = 0.5 * (v + v_n)
    beta = torch.atan(p.l_r * torch.tan(delta) / L)
    omega = v_m * torch.cos(beta) * torch.tan(delta) / L
    dpsi = omega * dt
    small = torch.abs(dpsi) < 1e-9
    dpsi_safe = torch.where(small, torch.ones_like(dpsi), dpsi)
    ds = v_m * dt  # arc length travelled by the CoG
    dx = torch.where(
        small, ds * torch.cos(psi + beta), ds / dpsi_safe * (torch.sin(psi + beta + dpsi) - torch.sin(psi + beta))
    )
    dy = torch.where(
        small, ds * torch.sin(psi + beta), ds / dpsi_safe * (torch.cos(psi + beta) - torch.cos(psi + beta + dpsi))
    )
    psi_n = torch.remainder(psi + dpsi + math.pi, 2 * math.pi) - math.pi
    r_n = v_n * torch.cos(beta) * torch.tan(delta) / L
    out = torch.stack([x + dx, y + dy, psi_n, v_n * torch.cos(beta), v_n * torch.sin(beta), r_n], -1)
    return out, torch.stack([a, v_n * r_n], -1)


def waymax_substep(
    s: torch.Tensor, throttle: torch.Tensor, delta: torch.Tensor, brake: torch.Tensor, p: VehicleParams, dt: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Waymax-style invertible bicycle: x′ = x + v cosψ dt + ½a cosψ dt², ψ′ = ψ + κ(v dt + ½a dt²), v′ = v + a dt.

    κ = tanδ/L; speed stays ≥ 0 (the acceleration is cut so v′ ≥ 0).
    """
    x, y, psi, vx, vy, _ = s.unbind(-1)
    v = torch.sqrt(vx**2 + vy**2)
    a = _kin_accel(v, throttle, brake, p)
    a = torch.maximum(a, -v / dt)
    kappa = torch.tan(delta) / p.L
    ds = v * dt + 0.5 * a * dt**2
    x_n = x + v * torch.cos(psi) * dt + 0.5 * a * torch.cos(psi) * dt**2
    y_n = y + v * torch.sin(psi) * dt + 0.5 * a * torch.sin(psi) * dt**2
    psi_n = torch.remainder(psi + kappa * ds + math.pi, 2 * math.pi) - math.pi
    v_n = v + a * dt
    return torch.stack([x_n, y_n, psi_n, v_n, torch.zeros_like(v_n), kappa * v_n], -1), torch.stack(
        [a, kappa * v_n**2], -1
    )


def step(
    state: torch.Tensor,
    acc: torch.Tensor,
    action: torch.Tensor,
    mu: torch.Tensor,
    p: VehicleParams,
    backend: str = "single_track",
    dt: float = 0.02,
    substeps: int = 4,
    repeat: int = 1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advance ``repeat``·``dt`` seconds in ``repeat``·``substeps`` sub-steps of dt/substeps with the action held.

    state [...,6], acc [...,2], mu [...].  ``repeat`` = physics steps per control step (decimation): the action decode
    and the steering trigonometry are done once for all of them instead of once per physics step.
    """
    throttle, delta, brake = decode_action(action, p)
    h = dt / substeps
    if backend in ("single_track", "two_track"):
        trig = steer_terms(delta, p)
        c = (*state.unbind(-1), *acc.unbind(-1))
        for _ in range(substeps * repeat):
            c = _single_track_components(c, throttle, delta, brake, mu, p, h, backend == "two_track", trig)
        return torch.stack(c[:6], -1), torch.stack(c[6:], -1)
    for _ in range(substeps * repeat):
        if backend == "kinematic":
            state, acc = kinematic_substep(state, throttle, delta, brake, p, h)
        elif backend == "waymax":
            state, acc = waymax_substep(state, throttle, delta, brake, p, h)
        else:
            raise ValueError(f"unknown backend {backend!r}; one of {BACKENDS}")
    return state, acc


# ------------------------------------------------------------------------------------------------
# The non-vectorised baseline: the same single-track / kinematic maths as a scalar per-vehicle Python loop.
# ------------------------------------------------------------------------------------------------
def _pacejka_scalar(alpha: float, fz: float, mu: float, p: VehicleParams, rear: bool = False) -> float:
    ba = (p.B_rear if rear and p.B_rear is not None else p.B) * alpha
    return mu * fz * math.sin(p.C * math.atan(ba - p.E * (ba - math.atan(ba))))


def _resist_scalar(vx: float, p: VehicleParams) -> float:
    return p.c_roll * p.m * G * math.tanh(vx / 0.1) + p.c_drag * vx * abs(vx)


def single_track_substep_scalar(
    s: list[float],
    acc: list[float],
    throttle: float,
    delta: float,
    brake: float,
    mu: float,
    p: VehicleParams,
    dt: float,
    two_track: bool = False,
) -> tuple[list[float], list[float]]:
    """Scalar twin of :func:`single_track_substep` (one vehicle, Python floats)."""
    x, y, psi, vx, vy, r = s
    ax, ay = acc
    L = p.L
    vxf = max(vx, p.v_floor)
    alpha_f = delta - math.atan2(vy + p.l_f * r, vxf)
    alpha_r = -math.atan2(vy - p.l_r * r, vxf)
    fzf = max(p.m * G * p.l_r / L - p.m * ax * p.h / L, 0.0)
    fzr = max(p.m * G * p.l_f / L + p.m * ax * p.h / L, 0.0)
    fb = brake * p.brake_force * math.tanh(vx / 0.05)
    share_f = fzf / max(fzf + fzr, 1e-6)
    fxf = -fb * share_f
    fxr = throttle * p.drive_force - fb * (1.0 - share_f)
    if two_track:
        dfz = p.m * ay * p.h / p.track
        fz0 = 0.25 * p.m * G
        fyf = fyr = 0.0
        for side in (1.0, -1.0):
            fw = max(0.5 * fzf + side * p.roll_front * dfz, 0.0)
            fyf += _pacejka_scalar(alpha_f, fw * (1.0 - p.load_sensitivity * (fw / fz0 - 1.0)), mu, p)
            fw = max(0.5 * fzr + side * (1.0 - p.roll_front) * dfz, 0.0)
            fyr += _pacejka_scalar(alpha_r, fw * (1.0 - p.load_sensitivity * (fw / fz0 - 1.0)), mu, p, True)
    else:
        fyf = _pacejka_scalar(alpha_f, fzf, mu, p)
        fyr = _pacejka_scalar(alpha_r, fzr, mu, p, True)
    kf = min(mu * fzf / max(math.hypot(fxf, fyf), 1e-9), 1.0)
    kr = min(mu * fzr / max(math.hypot(fxr, fyr), 1e-9), 1.0)
    fxf, fyf, fxr, fyr = fxf * kf, fyf * kf, fxr * kr, fyr * kr
    cd, sd = math.cos(delta), math.sin(delta)
    fx_body = fxr + fxf * cd - fyf * sd - _resist_scalar(vx, p)
    fy_body = fyr + fyf * cd + fxf * sd
    mz = p.l_f * (fyf * cd + fxf * sd) - p.l_r * fyr
    ax_new, ay_new = fx_body / p.m, fy_body / p.m
    vx_d = max(vx + (ax_new + vy * r) * dt, 0.0)
    vy_d = vy + (ay_new - vx * r) * dt
    r_d = r + mz / p.I_z * dt
    v_k = max(vx + ax_new * dt, 0.0)
    beta = math.atan(p.l_r * math.tan(delta) / L)
    w = min(max(vx - p.v_blend_lo, 0.0), 1.0)
    vx_n = w * vx_d + (1 - w) * v_k * math.cos(beta)
    vy_n = w * vy_d + (1 - w) * v_k * math.sin(beta)
    r_n = w * r_d + (1 - w) * v_k * math.cos(beta) * math.tan(delta) / L
    cp, sp = math.cos(psi), math.sin(psi)
    x_n = x + (vx_n * cp - vy_n * sp) * dt
    y_n = y + (vx_n * sp + vy_n * cp) * dt
    psi_n = (psi + r_n * dt + math.pi) % (2 * math.pi) - math.pi
    return [x_n, y_n, psi_n, vx_n, vy_n, r_n], [ax_new, ay_new]


def step_loop(
    states: list[list[float]],
    accs: list[list[float]],
    actions: list[list[float]],
    mus: list[float],
    p: VehicleParams,
    two_track: bool = False,
    dt: float = 0.02,
    substeps: int = 4,
) -> tuple[list[list[float]], list[list[float]]]:
    """Per-vehicle loop baseline: the same single-track physics, one vehicle at a time (non-vectorised)."""
    h = dt / substeps
    out_s, out_a = [], []
    for s, acc, a, mu in zip(states, accs, actions, mus, strict=False):
        throttle = max(min(a[0], 1.0), 0.0)
        delta = max(min(a[1], 1.0), -1.0) * p.delta_max
        brake = max(min(a[2], 1.0), 0.0)
        for _ in range(substeps):
            s, acc = single_track_substep_scalar(s, acc, throttle, delta, brake, mu, p, h, two_track)
        out_s.append(s)
        out_a.append(acc)
    return out_s, out_a


def understeer_gradient(p: VehicleParams, mu: float) -> float:
    """Linear bicycle K_us = m/L·(l_r/C_f − l_f/C_r) [rad/(m/s²)], C_axle = B·C·μ·F_z,static."""
    cf = p.B * p.C * mu * p.m * G * p.l_r / p.L
    cr = (p.B_rear if p.B_rear is not None else p.B) * p.C * mu * p.m * G * p.l_f / p.L
    return p.m / p.L * (p.l_r / cf - p.l_f / cr)

"""Weather → tyre-road friction: the modified ALL (average lumped LuGre) model of Zhao, Zhao & Cai (2024).

As parameterised in SceneFactory (``src/trfc/friction_api.py``; paper §3.3).  The bristle ODE

    ż = v_r − θ·Y_R·(σ0·|v_r|/g(v_r) + K·|w_r|)·z

has the steady state z* = v_r / (θY_R(σ0 v_r/g + K w_r)), so the friction coefficient is

    μ = max(θ·Y_R − Y_F, 0) · σ0·v_r / (σ0·v_r/g(v_r) + K·w_r)

with v_r = s·v, w_r = (1+s)·v, K = 7/(6 L_c), g(v_r) = μ_c + (μ_s − μ_c)·exp(−|v_r/v_s|^α) and the Stribeck speed
v_s(h_w) = b1·exp(1000·b2·h_w + b3) + b4 (h_w in metres).  Y_R (squeezed contact-length ratio, Eq. 12) and Y_F
(hydrodynamic-lift ratio) carry the water film.  All functions accept floats or torch tensors (broadcasting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

SURFACES: dict[str, tuple[float, float]] = {  # name: (θ texture coefficient, ε texture amplitude [mm])
    "AC": (1.00, 0.65),
    "SMA": (1.09, 0.80),
    "OGFC": (1.21, 1.08),
}
SURFACE_NAMES = list(SURFACES)


@dataclass(frozen=True)
class TyreGeometry:
    """Tyre / load constants of the ALL model (Zhao 2024 Table 5; SceneFactory defaults)."""

    normal_load: float = 3469.0  # F_z [N]
    pressure: float = 200e3  # p [Pa]
    width: float = 0.205  # w_t [m]
    contact_length: float = 0.164  # L_c [m]
    wheel_radius: float = 0.316  # R [m]
    tread_radius: float = 0.103  # r0 [m]
    squeeze_a: float = 4.05  # A in Eq. 12 — dimensionless (an area here gives a spurious μ=0 cliff at 0.8 mm)
    rho: float = 1050.0  # water density [kg/m³]
    gamma: float = 1.005e-3  # water viscosity [Pa·s]
    h_min: float = 0.008e-3  # minimum spacing [m]
    h0_ratio: float = 0.01  # h0 = 0.01·h_w
    sigma0: float = 310.78
    mu_c: float = 0.46
    mu_s: float = 1.51
    alpha: float = 0.90  # Stribeck exponent (calibrated in SceneFactory against Zhao Tables 2–3)
    b: tuple[float, float, float, float] = (4.8916, -7.91, 3.01, 3.40)


DEFAULT_TYRE = TyreGeometry()
GRIPTESTER = replace(
    DEFAULT_TYRE,
    normal_load=210.0,
    pressure=140e3,
    width=0.031,
    contact_length=0.046,
    wheel_radius=0.127,
    tread_radius=0.028,
)
V_REF = 13.89  # reference speed [m/s] (50 km/h)
SLIP_REF = 0.15  # static reference slip


def _t(x: float | torch.Tensor) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(x, dtype=torch.float64)


def contact_length_ratio(
    v: float | torch.Tensor, h_w: float | torch.Tensor, eps: float | torch.Tensor, tyre: TyreGeometry = DEFAULT_TYRE
) -> torch.Tensor:
    """Y_R = clamp(1 − [12vγr0²/(AπpL_c)]·(1/(h_min²+2εh_min) − 1/(h0²+2εh0)), 0, 1); Y_R = 1 when h_w = 0.

    v [m/s], h_w film thickness [m], eps texture amplitude [m].
    """
    v, h_w, eps = _t(v), _t(h_w), _t(eps)
    h0 = tyre.h0_ratio * h_w
    pre = (
        12.0 * v * tyre.gamma * tyre.tread_radius**2 / (tyre.squeeze_a * math.pi * tyre.pressure * tyre.contact_length)
    )
    term_dry = 1.0 / (tyre.h_min**2 + 2.0 * eps * tyre.h_min)
    term_wet = 1.0 / torch.clamp(h0**2 + 2.0 * eps * h0, min=1e-30)
    y_r = torch.clamp(1.0 - pre * (term_dry - term_wet), 0.0, 1.0)
    return torch.where(h_w > 0, y_r, torch.ones_like(y_r))


def hydrodynamic_ratio(
    v: float | torch.Tensor, h_w: float | torch.Tensor, tyre: TyreGeometry = DEFAULT_TYRE
) -> torch.Tensor:
    """Y_F = clamp(ρ w_t R v²/(3F_z)·(√((L/2R)² − (h/R)² + 2(h/R)√(1−(L/2R)²)) − L/2R), 0, 1); 0 when h_w = 0."""
    v, h_w = _t(v), _t(h_w)
    l2r = tyre.contact_length / (2.0 * tyre.wheel_radius)
    hr = h_w / tyre.wheel_radius
    inner = torch.clamp(l2r**2 - hr**2 + 2.0 * hr * math.sqrt(1.0 - l2r**2), min=0.0)
    y_f = tyre.rho * tyre.width * tyre.wheel_radius * v**2 / (3.0 * tyre.normal_load) * (torch.sqrt(inner) - l2r)
    y_f = torch.clamp(y_f, 0.0, 1.0)
    return torch.where(h_w > 0, y_f, torch.zeros_like(y_f))


def stribeck_speed(h_w: float | torch.Tensor, tyre: TyreGeometry = DEFAULT_TYRE) -> torch.Tensor:
    """v_s(h_w) = b1·exp(1000·b2·h_w + b3) + b4 (h_w in metres)."""
    b1, b2, b3, b4 = tyre.b
    return b1 * torch.exp(1000.0 * b2 * _t(h_w) + b3) + b4


def all_friction(
    v: float | torch.Tensor = V_REF,
    h_w_mm: float | torch.Tensor = 0.0,
    surface: str = "AC",
    slip: float = SLIP_REF,
    tyre: TyreGeometry = DEFAULT_TYRE,
    theta: float | torch.Tensor | None = None,
    eps_mm: float | torch.Tensor | None = None,
) -> torch.Tensor:
    """Steady-state μ of the modified ALL model (see module docstring). h_w_mm in millimetres."""
    th, ep = SURFACES[surface]
    theta = _t(th if theta is None else theta)
    eps = _t(ep if eps_mm is None else eps_mm) * 1e-3
    v = torch.abs(_t(v))
    h_w = torch.clamp(_t(h_w_mm), min=0.0) * 1e-3
    v_r = slip * v
    w_r = (1.0 + slip) * v
    y_r = contact_length_ratio(v, h_w, eps, tyre)
    y_f = hydrodynamic_ratio(v, h_w, tyre)
    v_s = stribeck_speed(h_w, tyre)
    g = tyre.mu_c + (tyre.mu_s - tyre.mu_c) * torch.exp(-(torch.abs(v_r / v_s) ** tyre.alpha))
    k = 7.0 / (6.0 * tyre.contact_length)
    lugre = tyre.sigma0 * v_r / torch.clamp(tyre.sigma0 * v_r / g + k * w_r, min=1e-12)
    return torch.clamp(theta * y_r - y_f, min=0.0) * lugre


def surface_friction(h_w_mm: torch.Tensor, surface_idx: torch.Tensor, v: float = V_REF) -> torch.Tensor:
    """Per-world μ at the reference speed for film depths ``h_w_mm`` [W] and surface indices [W] (0=AC,1=SMA,2=OGFC).

    Like SceneFactory, one scalar per world (PhysX material); here it scales the tyre peak D = μF_z.
    """
    thetas = torch.tensor([SURFACES[s][0] for s in SURFACE_NAMES], dtype=torch.float64, device=h_w_mm.device)
    epss = torch.tensor([SURFACES[s][1] for s in SURFACE_NAMES], dtype=torch.float64, device=h_w_mm.device)
    mu = all_friction(
        torch.full_like(h_w_mm, v, dtype=torch.float64),
        h_w_mm.double(),
        theta=thetas[surface_idx],
        eps_mm=epss[surface_idx],
    )
    return mu.to(h_w_mm.dtype if h_w_mm.is_floating_point() else torch.float32)


def rain_to_film(intensity_mm_h: float, drainage: float = 1.0, k_rain: float = 0.05, h_max_mm: float = 3.0) -> float:
    """Water film from rain, h_w = clamp(0.05·I[mm/h]·drainage, 0, 3 mm) (SceneFactory helper)."""
    return min(max(k_rain * intensity_mm_h * drainage, 0.0), h_max_mm)


def hydroplaning_speed(h_w_mm: float, surface: str = "AC", tyre: TyreGeometry = DEFAULT_TYRE) -> float:
    """Lowest speed [m/s] at which μ → 0 (θY_R = Y_F), by bisection on the contact factor."""

    def factor(v: float) -> float:
        th, ep = SURFACES[surface]
        h = h_w_mm * 1e-3
        return float(th * contact_length_ratio(v, h, ep * 1e-3, tyre) - hydrodynamic_ratio(v, h, tyre))

    lo, hi = 0.1, 200.0
    if factor(hi) > 0:
        return math.inf
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if factor(mid) > 0 else (lo, mid)
    return 0.5 * (lo + hi)


ZHAO_TABLE2_KMH = [10, 20, 30, 40, 50, 60, 70, 80, 90]  # at h_w = 0.25 mm, GripTester
ZHAO_TABLE2_MU = [0.81, 0.79, 0.79, 0.75, 0.73, 0.75, 0.67, 0.64, 0.61]
ZHAO_TABLE3_MM = [0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50]  # at 50 km/h
ZHAO_TABLE3_MU = [0.81, 0.78, 0.77, 0.74, 0.73, 0.72, 0.70, 0.68, 0.66, 0.62]


def zhao_fit_rmse() -> tuple[float, float]:
    """RMSE of the model (GripTester geometry, ε = 0.64 mm) against Zhao 2024 Tables 2 and 3."""
    v2 = torch.tensor(ZHAO_TABLE2_KMH, dtype=torch.float64) / 3.6
    mu2 = all_friction(v2, 0.25, tyre=GRIPTESTER, eps_mm=0.64)
    mu3 = all_friction(50 / 3.6, torch.tensor(ZHAO_TABLE3_MM, dtype=torch.float64), tyre=GRIPTESTER, eps_mm=0.64)
    r2 = torch.sqrt(torch.mean((mu2 - torch.tensor(ZHAO_TABLE2_MU, dtype=torch.float64)) ** 2))
    r3 = torch.sqrt(torch.mean((mu3 - torch.tensor(ZHAO_TABLE3_MU, dtype=torch.float64)) ** 2))
    return float(r2), float(r3)

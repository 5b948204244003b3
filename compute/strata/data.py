"""Training-data generator: moist spherical shallow water (stand-in for SCREAM output, spec §2 "Data generator").

Dynamics: torch-harmonics' spectral ``ShallowWaterSolver`` (φ = g·h, ζ, δ; AB3 + implicit hyperdiffusion).
Moist-convective extension (design choice, the paper uses SCREAM; tested for its budgets):

    ∂q/∂t = −∇·(u q) + E − C,           C = max(q − q_s(φ_lat), 0) / τ,   P = C
    ∂φ/∂t = −∇·(u φ) − γ C               (latent heating as a geopotential sink)
    E = max(1.003·q_s − q, 0) / τ_e,     q_s = 0.4 + 0.6 cos⁴(lat)

∫φ dA is conserved exactly when γ = 0 (the l = 0 mode of a divergence is zero), and d/dt ∫q dA = ∫(E − P) dA.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch

CHANNELS = ("h", "u", "v", "q", "P")


@dataclass
class GeneratorConfig:
    """Moist shallow-water world; one frame every ``frame_minutes`` simulated minutes."""

    nlat: int = 32
    nlon: int = 64
    days: float = 2.0  # simulated days of frames
    spinup_days: float = 0.5  # discarded before the first frame
    dt: float = 600.0  # solver time step (s); one step per 10-min frame at 32×64 (use 300 s at 128×256)
    frame_minutes: float = 10.0
    radius: float = 6.37122e6
    omega: float = 7.292e-5  # rotation (rad/s)
    havg: float = 10.0e3
    hamp: float = 120.0
    mach: float = 1.0  # amplitude of the random initial flow
    tau: float = 3600.0  # condensation time scale τ (s)
    gamma: float = 4.0e4  # latent heating γ: geopotential lost per unit condensed q (m²/s²)
    evap_days: float = 1.0  # evaporation relaxation time τ_e (days)
    moist: bool = True
    seed: int = 0


def qsat(lats: torch.Tensor) -> torch.Tensor:
    """q_s(lat) = 0.4 + 0.6·cos⁴(lat)."""
    return 0.4 + 0.6 * torch.cos(lats) ** 4


class MoistShallowWater:
    """Spectral moist shallow water on the sphere; state = (φ, ζ, δ, q) spectral coefficients (4, L, M)."""

    def __init__(self, cfg: GeneratorConfig) -> None:
        from torch_harmonics.examples import ShallowWaterSolver

        self.cfg = cfg
        self.sw = ShallowWaterSolver(
            cfg.nlat, cfg.nlon, cfg.dt, radius=cfg.radius, omega=cfg.omega, havg=cfg.havg, hamp=cfg.hamp
        )
        self.lats = self.sw.lats.reshape(-1, 1)  # (nlat, 1) radians, north → south
        self.lons = self.sw.lons.reshape(1, -1)
        self.qs = qsat(self.lats).expand(cfg.nlat, cfg.nlon)
        self.steps_done = 0

    # -- state ----------------------------------------------------------------------------------
    def initial_state(self) -> torch.Tensor:
        torch.manual_seed(self.cfg.seed)
        uspec = self.sw.random_initial_condition(mach=self.cfg.mach)
        q0 = self.qs * (0.995 + 0.01 * torch.randn(self.cfg.nlat, self.cfg.nlon, dtype=torch.float64))
        qspec = self.sw.grid2spec(q0) if self.cfg.moist else torch.zeros_like(uspec[0])
        return torch.cat([uspec, qspec[None]], 0)

    def sources(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Condensation C (= precipitation P) and evaporation E on the grid, both ≥ 0."""
        c = torch.clamp(q - self.qs, min=0.0) / self.cfg.tau
        e = torch.clamp(1.003 * self.qs - q, min=0.0) / (self.cfg.evap_days * 86400.0)
        return c, e

    def tendency(self, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """d(state)/dt in spectral space, plus the grid fields C and E used (batched transforms).

        Same dry terms as ``ShallowWaterSolver.dudtspec``: ∂ζ/∂t = −∇·(u(ζ+f)), ∂δ/∂t = k·∇×(u(ζ+f)) − ∇²(φ+|u|²/2),
        ∂φ/∂t = −∇·(uφ); plus the moist terms of the module docstring.
        """
        sw = self.sw
        grids = sw.spec2grid(state[[0, 1, 3]])  # φ, ζ, q on the grid
        phi, vort, q = grids[0], grids[1], grids[2]
        uv = sw.getuv(state[1:3])  # (2, nlat, nlon)
        fluxes = torch.stack([uv * (vort + sw.coriolis), uv * phi, uv * q])  # (3, 2, nlat, nlon)
        fspec = sw.vrtdivspec(fluxes)  # (3, 2, L, M): [curl, div] of each flux
        if self.cfg.moist:
            c, e = self.sources(q)
        else:
            c = e = torch.zeros_like(q)
        sspec = sw.grid2spec(torch.stack([phi + 0.5 * (uv[0] ** 2 + uv[1] ** 2), e - c, c]))
        d = torch.empty_like(state)
        d[0] = -fspec[1, 1] - self.cfg.gamma * sspec[2] * float(self.cfg.moist)
        d[1] = -fspec[0, 1]
        d[2] = fspec[0, 0] - sw.lap * sspec[0]
        d[3] = (-fspec[2, 1] + sspec[1]) if self.cfg.moist else 0.0
        return d, c, e

    def run(self, state: torch.Tensor, nsteps: int, hist: list | None = None, budget: list | None = None):
        """AB3 steps (forward Euler, AB2 to start); hyperdiffusion on ζ, δ and q (keeps l = 0 exact)."""
        dt = self.cfg.dt
        hist = hist if hist is not None else []
        for _ in range(nsteps):
            d, c, e = self.tendency(state)
            hist.insert(0, d)
            del hist[3:]
            if len(hist) == 1:
                incr = hist[0]
            elif len(hist) == 2:
                incr = 1.5 * hist[0] - 0.5 * hist[1]
            else:
                incr = (23.0 * hist[0] - 16.0 * hist[1] + 5.0 * hist[2]) / 12.0
            if budget is not None:
                budget.append(dt * float(self.integrate(e - c)))
            state = state + dt * incr
            state[1:] = self.sw.hyperdiff * state[1:]
            self.steps_done += 1
        return state, hist

    # -- diagnostics ----------------------------------------------------------------------------
    def integrate(self, grid: torch.Tensor) -> torch.Tensor:
        """∫ f dA on the unit sphere (Clenshaw–Curtis weights)."""
        return self.sw.integrate_grid(grid, dimensionless=True)

    def fields(self, state: torch.Tensor) -> torch.Tensor:
        """Grid fields (h, u, v, q, P) of one state, float64, shape (5, nlat, nlon)."""
        sw = self.sw
        h = sw.spec2grid(state[0]) / sw.gravity
        uv = sw.getuv(state[1:3])
        q = sw.spec2grid(state[3])
        p = self.sources(q)[0] * 3600.0 if self.cfg.moist else torch.zeros_like(q)  # mm/h-like units
        return torch.stack([h, uv[0], uv[1], q, p])


@dataclass
class Dataset:
    """Frames (N, C, D=1, nlat, nlon) float32 plus grid, statistics and the solver's measured cost."""

    frames: np.ndarray
    lats: np.ndarray  # (nlat,) radians
    lons: np.ndarray  # (nlon,) radians
    mean: np.ndarray  # (C,) per-variable field mean
    std: np.ndarray  # (C,) per-variable field std
    dstd: np.ndarray  # (C,) std of 10-min increments
    solver_seconds_per_day: float
    frame_minutes: float

    def normalize(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean[:, None, None, None]) / self.std[:, None, None, None]


def generate(cfg: GeneratorConfig, progress=None) -> tuple[Dataset, dict]:
    """Integrate the moist world; returns the dataset and diagnostics (mass, water budget, rain fraction)."""
    torch.set_default_dtype(torch.float64)
    try:
        model = MoistShallowWater(cfg)
        state = model.initial_state()
    finally:
        torch.set_default_dtype(torch.float32)
    steps_per_frame = max(1, round(cfg.frame_minutes * 60.0 / cfg.dt))
    hist: list = []
    spin = int(round(cfg.spinup_days * 86400.0 / cfg.dt))
    if spin:
        state, hist = model.run(state, spin, hist)
    n_frames = int(round(cfg.days * 86400.0 / (cfg.frame_minutes * 60.0))) + 1
    frames = np.empty((n_frames, len(CHANNELS), 1, cfg.nlat, cfg.nlon), np.float32)
    diag = {"mass": [], "water": [], "rain_fraction": [], "budget_error": []}
    solve_time = 0.0
    for i in range(n_frames):
        if i:
            budget: list = []
            w0 = float(model.integrate(model.sw.spec2grid(state[3])))
            t0 = time.perf_counter()
            state, hist = model.run(state, steps_per_frame, hist, budget)
            solve_time += time.perf_counter() - t0
            w1 = float(model.integrate(model.sw.spec2grid(state[3])))
            diag["budget_error"].append((w1 - w0) - sum(budget))
        f = model.fields(state)
        if not torch.isfinite(f).all():
            raise FloatingPointError(f"solver blew up at frame {i}; lower dt or mach")
        frames[i, :, 0] = f.float().numpy()
        diag["mass"].append(float(model.integrate(f[0])))
        diag["water"].append(float(model.integrate(f[3])))
        diag["rain_fraction"].append(float((f[4] > 1e-4).double().mean()))
        if progress is not None and (i % 12 == 0 or i == n_frames - 1):
            progress(i / max(1, n_frames - 1), frames[i])
    sim_days = (n_frames - 1) * cfg.frame_minutes / 1440.0
    ds = Dataset(
        frames=frames,
        lats=model.sw.lats.numpy().astype(np.float64),
        lons=model.sw.lons.numpy().astype(np.float64),
        mean=frames.mean(axis=(0, 2, 3, 4)).astype(np.float32),
        std=(frames.std(axis=(0, 2, 3, 4)) + 1e-6).astype(np.float32),
        dstd=(np.diff(frames, axis=0).std(axis=(0, 2, 3, 4)) + 1e-6).astype(np.float32),
        solver_seconds_per_day=solve_time / max(sim_days, 1e-9),
        frame_minutes=cfg.frame_minutes,
    )
    return ds, diag


def ke_spectrum(model: MoistShallowWater, u: torch.Tensor, v: torch.Tensor) -> np.ndarray:
    """Kinetic-energy spectrum E(l) = Σ_m |û_lm|² + |v̂_lm|² (factor 2 for m > 0; real SHT)."""
    out = []
    for f in (u, v):
        c = model.sw.grid2spec(f.double())
        p = (c.abs() ** 2).clone()
        p[:, 1:] *= 2.0
        out.append(p.sum(dim=1))
    return (0.5 * (out[0] + out[1])).numpy()


def zonal_power(x: np.ndarray, lats: np.ndarray, exclude_pole_rows: int = 2) -> np.ndarray:
    """Power spectrum along longitude (zonal wavenumber), cos(lat)-weighted mean over rows; pole rows excluded."""
    rows = slice(exclude_pole_rows, x.shape[-2] - exclude_pole_rows)
    f = np.fft.rfft(x[..., rows, :], axis=-1)
    p = np.abs(f) ** 2 / x.shape[-1] ** 2
    w = np.cos(lats[rows])[:, None]
    return (p * w).sum(axis=-2) / w.sum()


def simulated_days(n_steps: int, frame_minutes: float) -> float:
    return n_steps * frame_minutes / 1440.0


__all__ = ["CHANNELS", "GeneratorConfig", "MoistShallowWater", "Dataset", "generate", "zonal_power", "math"]

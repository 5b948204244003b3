"""VecDrive: W worlds × A agents as batched tensors — control, observations, rewards, resets (SceneFactory §3).

Finished agents are parked (they neither move nor collide); a world resets on its own when all its spawned agents
are parked or its step budget runs out.  Per-world road condition (film depth, surface) → μ via the ALL model.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from .dynamics import G, VehicleParams
from .dynamics import step as dyn_step
from .friction import surface_friction
from .metrics import drac, ttc
from .obs import ROAD_OFFSETS, observe, wrap
from .reward import RewardWeights, compute_reward
from .scenes import LANE_WIDTH, SCENE_KINDS, generate

CIRCLE_OFFSETS = (-1.45, 0.0, 1.45)  # 3 collision circles along the body [m]
CIRCLE_RADIUS = 0.9  # [m]


def envelope_gap(
    d2: torch.Tensor, dpx: torch.Tensor, dpy: torch.Tensor, c: torch.Tensor, s: torch.Tensor
) -> torch.Tensor:
    """Gap between the 3-circle envelopes of every pair, [W, A, A], without building the [W, A, A, 3, 3] tensor.

    Circle centres p + o·u (u = (cos ψ, sin ψ), o ∈ {−ℓ, 0, ℓ}, ℓ = CIRCLE_OFFSETS[-1]); for Δp = p_j − p_i
        |Δp + o_j u_j − o_i u_i|² = |Δp|² + o_i² + o_j² + 2 o_j Δp·u_j − 2 o_i Δp·u_i − 2 o_i o_j u_i·u_j,
    and the minimum over the 9 (o_i, o_j) has a closed form per sign pattern (|·| picks the minimising sign):
        (0,0): |Δp|²;  (0,±ℓ): |Δp|² + ℓ² − |2ℓ a|;  (±ℓ,0): |Δp|² + ℓ² − |2ℓ b|;
        (±ℓ,±ℓ): |Δp|² + 2ℓ² + min(−C − |A − B|, C − |A + B|),  A = 2ℓa, B = 2ℓb, C = 2ℓ²c,
    with a = Δp·u_j, b = Δp·u_i, c = u_i·u_j.  Equal to the brute-force 3×3 minimum (tested).
    """
    ell = CIRCLE_OFFSETS[-1]
    assert CIRCLE_OFFSETS == (-ell, 0.0, ell)
    cj, sj, ci, si = c[:, None, :], s[:, None, :], c[:, :, None], s[:, :, None]
    big_a = (dpx * cj + dpy * sj) * (2 * ell)
    big_b = (dpx * ci + dpy * si) * (2 * ell)
    big_c = (ci * cj + si * sj) * (2 * ell * ell)
    cross = torch.minimum(-big_c - (big_a - big_b).abs(), big_c - (big_a + big_b).abs()) + ell * ell
    single = torch.maximum(big_a.abs(), big_b.abs()).neg_()
    m = torch.minimum(torch.minimum(cross, single) + ell * ell, torch.zeros_like(d2)) + d2
    return torch.sqrt(torch.clamp(m, min=0.0)) - 2 * CIRCLE_RADIUS


@dataclass
class EnvConfig:
    """Environment knobs (spec §2–3).  One control step = ``dt`` s = dt/physics_dt physics steps of ``substeps``."""

    n_worlds: int = 64
    n_agents: int = 8
    backend: str = "single_track"  # single_track | two_track | kinematic | waymax
    scenes: tuple[str, ...] = SCENE_KINDS
    dt: float = 0.1  # control period [s] (action held; Isaac-Lab-style decimation)
    physics_dt: float = 0.02  # [s]
    substeps: int = 1  # semi-implicit Euler sub-steps per physics step (20 ms; stable with the low-speed blend)
    max_steps: int = 120  # control steps per world episode
    n_points: int = 64  # route resolution
    k_nbr: int = 4
    v0: tuple[float, float] = (7.0, 13.0)  # initial speed range [m/s]
    arc_radius: tuple[float, float] = (25.0, 50.0)  # inner-lane radius range of arc scenes [m]
    arc_lead: float = 20.0  # straight run-up before the arc [m]
    road_offsets: tuple[int, ...] = ROAD_OFFSETS  # look-ahead route indices observed (64 points ≈ 1–1.8 m apart)
    goal_radius: float = 3.0
    offroad_dist: float = 3.0  # lateral distance from the lane centre that counts as leaving the road [m]
    spawn_prob: float = 1.0  # each agent is spawned with this probability (agent 0 always)
    bank_size: int = 256  # scenes generated once; a world reset draws from this bank (a batched gather)
    wet_fraction: float = 0.0  # share of worlds with a water film
    film_mm: tuple[float, ...] = (0.5, 5.0, 12.0)  # film depths a wet world draws from
    surface: str = "AC"  # AC | SMA | OGFC | mixed
    weather_token: bool = True  # friction-aware (token visible) or blind (token masked)
    reward: RewardWeights = field(default_factory=RewardWeights)


class VecDriveEnv:
    """Batched multi-agent driving environment on one torch device."""

    def __init__(self, cfg: EnvConfig, device: str = "cpu", seed: int = 0, params: VehicleParams | None = None) -> None:
        self.cfg, self.device, self.p = cfg, device, params or VehicleParams()
        self.rng = np.random.default_rng(seed)
        self.gen = torch.Generator(device="cpu").manual_seed(seed)
        W, A = cfg.n_worlds, cfg.n_agents
        z = lambda *s, dt=torch.float32: torch.zeros(*s, dtype=dt, device=device)  # noqa: E731
        self.state, self.acc, self.prev_action = z(W, A, 6), z(W, A, 2), z(W, A, 3)
        self.route, self.heading, self.arclen = z(W, A, cfg.n_points, 2), z(W, A, cfg.n_points), z(W, A, cfg.n_points)
        self.idx = z(W, A, dt=torch.long)
        self.spawned, self.parked = z(W, A, dt=torch.bool), z(W, A, dt=torch.bool)
        self.h_w, self.surface, self.mu, self.kind = z(W), z(W, dt=torch.long), z(W), z(W, dt=torch.long)
        self.t = z(W, dt=torch.long)
        self.lateral, self.heading_err, self.arc_s = z(W, A), z(W, A), z(W, A)
        self.stats = {k: z(W, A, dt=torch.bool) for k in ("success", "collision", "offroad")}
        self.peak_drac, self.min_ttc, self.ep_return = z(W, A), z(W, A), z(W, A)
        # friction-limit diagnostics: peak |a|/(μg) (tyre force actually used on physics; acceleration *demanded* on
        # the kinematic backends, which have no grip limit) and the mean speed of each agent-episode
        self.peak_grip, self.speed_sum, self.n_steps = z(W, A), z(W, A), z(W, A)
        self.finished: list[dict[str, torch.Tensor]] = []
        self.timing = {"physics": 0.0, "observation": 0.0, "reward": 0.0}
        self.profile = False
        self._not_eye = ~torch.eye(A, dtype=torch.bool, device=device)
        self._win = torch.arange(-2, 16, device=device)
        self.bank_n = max(8, min(cfg.bank_size, 4 * W))
        self.bank = generate(
            self.bank_n,
            A,
            list(cfg.scenes),
            self.rng,
            cfg.n_points,
            device=device,
            arc_radius=cfg.arc_radius,
            arc_lead=cfg.arc_lead,
        )
        self.reset_worlds(torch.arange(W, device=device))

    # -- resets --------------------------------------------------------------------------------
    def reset_worlds(self, w: torch.Tensor) -> None:
        """Regenerate scenes, weather and agents of worlds ``w`` (batched)."""
        if w.numel() == 0:
            return
        cfg, n = self.cfg, int(w.numel())
        pick = torch.as_tensor(self.rng.integers(0, self.bank_n, n), device=self.device)
        b = self.bank
        route, heading, arclen, i0 = b.route[pick], b.heading[pick], b.arclen[pick], b.spawn_idx[pick]
        self.route[w], self.heading[w], self.arclen[w], self.kind[w] = route, heading, arclen, b.kind[pick]
        spawned = torch.as_tensor(self.rng.random((n, cfg.n_agents)) < cfg.spawn_prob, device=self.device)
        spawned[:, 0] = True
        self.spawned[w], self.parked[w] = spawned, ~spawned
        wet = self.rng.random(n) < cfg.wet_fraction
        h = np.where(wet, self.rng.choice(np.asarray(cfg.film_mm, dtype=float), n), 0.0)
        surf = (
            self.rng.integers(0, 3, n)
            if cfg.surface == "mixed"
            else np.full(n, ["AC", "SMA", "OGFC"].index(cfg.surface))
        )
        self.h_w[w] = torch.as_tensor(h, dtype=torch.float32, device=self.device)
        self.surface[w] = torch.as_tensor(surf, device=self.device)
        self.mu[w] = surface_friction(self.h_w[w], self.surface[w])
        pos = torch.gather(route, 2, i0[..., None, None].expand(n, cfg.n_agents, 1, 2))[:, :, 0]
        psi = torch.gather(heading, 2, i0[..., None])[..., 0]
        v0 = torch.as_tensor(self.rng.uniform(*cfg.v0, (n, cfg.n_agents)), dtype=torch.float32, device=self.device)
        st = torch.zeros(n, cfg.n_agents, 6, device=self.device)
        st[..., 0:2], st[..., 2], st[..., 3] = pos, psi, v0
        self.state[w], self.acc[w], self.prev_action[w] = st, 0.0, 0.0
        self.idx[w], self.t[w] = i0, 0
        for v in self.stats.values():
            v[w] = False
        self.peak_drac[w], self.min_ttc[w], self.ep_return[w] = 0.0, float("inf"), 0.0
        self.peak_grip[w], self.speed_sum[w], self.n_steps[w] = 0.0, 0.0, 0.0
        self.refresh()

    def refresh(self) -> None:
        """Recompute derived geometry (lateral offset, pairs, goal distance) from the current state and routes."""
        self._geometry(update_idx=False)
        self._pairs()
        self.goal_dist = torch.linalg.norm(self.route[:, :, -1] - self.state[..., :2], dim=-1)

    # -- geometry ------------------------------------------------------------------------------
    def _geometry(self, update_idx: bool = True) -> None:
        """Route index (monotone window search), signed lateral offset, heading error, arc length."""
        pos, psi = self.state[..., :2], self.state[..., 2]
        n = self.cfg.n_points
        if update_idx:  # nearest route point inside the window [idx − 2, idx + 15] (gathered, not masked)
            j = torch.clamp(self.idx[..., None] + self._win, 0, n - 1)  # [W, A, 18], increasing → same tie-break
            pts = torch.gather(self.route, 2, j[..., None].expand(*j.shape, 2))
            d2 = (pts[..., 0] - pos[..., 0:1]) ** 2 + (pts[..., 1] - pos[..., 1:2]) ** 2
            self.idx = torch.gather(j, 2, torch.argmin(d2, -1, keepdim=True))[..., 0]
        i0 = torch.clamp(self.idx, max=n - 2)
        a = torch.gather(self.route, 2, i0[..., None, None].expand(*i0.shape, 1, 2))[:, :, 0]
        b = torch.gather(self.route, 2, (i0 + 1)[..., None, None].expand(*i0.shape, 1, 2))[:, :, 0]
        ab, ap = b - a, pos - a
        seg = torch.clamp((ab**2).sum(-1), min=1e-9)
        tt = torch.clamp((ab * ap).sum(-1) / seg, 0.0, 1.0)
        proj = a + tt[..., None] * ab
        dist = torch.linalg.norm(pos - proj, dim=-1)
        cross = ab[..., 0] * ap[..., 1] - ab[..., 1] * ap[..., 0]
        self.lateral = torch.where(cross >= 0, dist, -dist)
        h = torch.gather(self.heading, 2, i0[..., None])[..., 0]
        self.heading_err = wrap(psi - h)
        self.arc_s = torch.gather(self.arclen, 2, i0[..., None])[..., 0] + tt * torch.sqrt(seg)

    def _pairs(self) -> None:
        """Pairwise distances, envelope gaps (3 circles), closing speeds, TTC and DRAC between active agents."""
        x, y, psi, vx, vy, _ = self.state.unbind(-1)
        c, s = torch.cos(psi), torch.sin(psi)
        vwx, vwy = vx * c - vy * s, vx * s + vy * c
        self.v_world = torch.stack([vwx, vwy], -1)
        dpx, dpy = x[:, None, :] - x[:, :, None], y[:, None, :] - y[:, :, None]  # p_j − p_i
        dvx, dvy = vwx[:, None, :] - vwx[:, :, None], vwy[:, None, :] - vwy[:, :, None]
        d2 = dpx * dpx + dpy * dpy
        self.pair_dist = torch.sqrt(d2)
        gap = envelope_gap(d2, dpx, dpy, c, s)
        closing = -(dpx * dvx + dpy * dvy) / torch.clamp(self.pair_dist, min=1e-6)
        act = ~self.parked
        self.pair_valid = act[:, :, None] & act[:, None, :] & self._not_eye
        invalid = ~self.pair_valid
        self.pair_gap = gap.masked_fill(invalid, float("inf"))
        self.pair_ttc = ttc(gap, closing).masked_fill(invalid, float("inf"))
        self.pair_drac = drac(gap, closing).masked_fill(invalid, 0.0)

    # -- API -----------------------------------------------------------------------------------
    def observe(self) -> dict[str, torch.Tensor]:
        t0 = self._tic()
        o = observe(self)
        self._toc("observation", t0)
        return o

    def _tic(self) -> float:
        if self.profile and self.device.startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter()

    def _toc(self, key: str, t0: float) -> None:
        self.timing[key] += self._tic() - t0

    def step(self, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """Apply actions [W, A, 3]; return reward [W, A], done [W, A] (agent transition ended) and info."""
        cfg = self.cfg
        active = ~self.parked
        t0 = self._tic()
        s, acc = self.state, self.acc
        mu = self.mu[:, None].expand_as(active)
        decim = max(1, round(cfg.dt / cfg.physics_dt))
        s, acc = dyn_step(s, acc, action, mu, self.p, cfg.backend, cfg.physics_dt, cfg.substeps, decim)
        self.state = torch.where(active[..., None], s, self.state)
        self.acc = torch.where(active[..., None], acc, self.acc)
        self._toc("physics", t0)
        t0 = self._tic()
        arc_prev, gd_prev = self.arc_s, self.goal_dist
        self._geometry()
        self._pairs()
        goal_dist = torch.linalg.norm(self.route[:, :, -1] - self.state[..., :2], dim=-1)
        collided = active & (self.pair_gap < 0).any(-1)
        lane_touch = (
            torch.sin(self.heading_err).abs() * CIRCLE_OFFSETS[-1] + self.lateral.abs() + CIRCLE_RADIUS > LANE_WIDTH / 2
        )
        offroad = active & (self.lateral.abs() > cfg.offroad_dist)
        reached = active & (goal_dist < cfg.goal_radius) & ~collided & ~offroad
        vx, vy, r = self.state[..., 3], self.state[..., 4], self.state[..., 5]
        quantities = {
            "action": action,
            "prev_action": self.prev_action,
            "progress": self.arc_s - arc_prev,
            "goal_dist": goal_dist,
            "goal_dist_prev": gd_prev,
            "heading_err": self.heading_err,
            "v_along": vx * torch.cos(self.heading_err) - vy * torch.sin(self.heading_err),
            "vy": vy,
            "yaw_rate": r,
            "min_gap": self.pair_gap.min(-1).values,
            "lateral": self.lateral,
            "lane_touch": lane_touch,
            "reached": reached,
            "collided": collided,
            "offroad": offroad,
        }
        reward, terms = compute_reward(cfg.reward, quantities)
        reward = torch.where(active, reward, torch.zeros_like(reward))
        # episode statistics (parked agents contribute nothing)
        self.ep_return += reward
        self.peak_drac = torch.where(
            active, torch.maximum(self.peak_drac, self.pair_drac.max(-1).values), self.peak_drac
        )
        self.min_ttc = torch.where(active, torch.minimum(self.min_ttc, self.pair_ttc.min(-1).values), self.min_ttc)
        grip = torch.hypot(self.acc[..., 0], self.acc[..., 1]) / (torch.clamp(mu, min=1e-3) * G)
        self.peak_grip = torch.where(active, torch.maximum(self.peak_grip, grip), self.peak_grip)
        self.speed_sum += torch.hypot(vx, vy) * active
        self.n_steps += active.float()
        self.stats["success"] |= reached
        self.stats["collision"] |= collided
        self.stats["offroad"] |= offroad
        terminal = reached | collided | offroad
        self.parked = self.parked | terminal
        self.prev_action = torch.where(active[..., None], action, self.prev_action)
        self.t += 1
        trunc = self.t >= cfg.max_steps
        done = terminal | (active & trunc[:, None])
        finished = trunc | self.parked.all(-1)
        self.goal_dist = goal_dist
        if bool(finished.any()):
            w = torch.nonzero(finished).flatten()
            m = self.spawned[w]
            self.finished.append(
                {
                    "success": self.stats["success"][w][m],
                    "collision": self.stats["collision"][w][m],
                    "offroad": self.stats["offroad"][w][m],
                    "peak_drac": self.peak_drac[w][m],
                    "min_ttc": self.min_ttc[w][m],
                    "return": self.ep_return[w][m],
                    "h_w": self.h_w[w][:, None].expand_as(m)[m],
                    "peak_grip": self.peak_grip[w][m],
                    "mean_speed": (self.speed_sum[w] / torch.clamp(self.n_steps[w], min=1.0))[m],
                }
            )
            self.reset_worlds(w)
        self._toc("reward", t0)
        return reward, done, {"active": active, "terms": terms}

    def pop_finished(self) -> dict[str, torch.Tensor]:
        """Concatenate and clear finished agent-episodes (spawned agents of worlds that ended)."""
        if not self.finished:
            return {
                k: torch.zeros(0)
                for k in (
                    "success",
                    "collision",
                    "offroad",
                    "peak_drac",
                    "min_ttc",
                    "return",
                    "h_w",
                    "peak_grip",
                    "mean_speed",
                )
            }
        out = {k: torch.cat([f[k] for f in self.finished]).cpu() for k in self.finished[0]}
        self.finished = []
        return out

    @property
    def n_spawned(self) -> int:
        return int(self.spawned.sum())

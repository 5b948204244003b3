"""Observations (spec §2): 7 ego/goal features + weather token, k look-ahead road points × (x, y, type, dir),
k nearest neighbours × (6 + TTC).  All in the ego frame, as ``[W, A, …]`` tensors."""

from __future__ import annotations

import math

import torch

ROAD_OFFSETS = (1, 2, 3, 5, 7, 10, 14, 19)  # look-ahead route indices
EGO_DIM, TOKEN_DIM, ROAD_DIM, NBR_DIM = 7, 4, 4, 7


def wrap(a: torch.Tensor) -> torch.Tensor:
    """Wrap angles to [−π, π)."""
    return torch.remainder(a + math.pi, 2 * math.pi) - math.pi


def to_ego(dx: torch.Tensor, dy: torch.Tensor, psi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Rotate world-frame offsets into the ego frame of heading ψ (broadcasting)."""
    c, s = torch.cos(psi), torch.sin(psi)
    return c * dx + s * dy, -s * dx + c * dy


def weather_token(h_w_mm: torch.Tensor, surface: torch.Tensor, aware: bool) -> torch.Tensor:
    """[W, 4] = (h_w/5 mm, one-hot AC/SMA/OGFC); all zeros when the policy is friction-blind (masked token)."""
    tok = torch.cat([h_w_mm[:, None] / 5.0, torch.nn.functional.one_hot(surface, 3).to(h_w_mm.dtype)], 1)
    return tok if aware else torch.zeros_like(tok)


def observe(env: object) -> dict[str, torch.Tensor]:  # env: VecDriveEnv (duck-typed to avoid a cycle)
    """Build the observation dict {ego [W,A,11], road [W,A,Kr,4], nbr [W,A,Kn,7], nbr_mask [W,A,Kn]}."""
    s = env.state
    W, A = s.shape[:2]
    x, y, psi, vx, vy, r = s.unbind(-1)
    goal = env.route[:, :, -1]
    gx, gy = to_ego(goal[..., 0] - x, goal[..., 1] - y, psi)
    ego = torch.stack([vx / 10.0, vy / 5.0, r, gx / 50.0, gy / 50.0, env.lateral / 2.0, env.heading_err], -1)
    tok = weather_token(env.h_w, env.surface, env.cfg.weather_token)[:, None, :].expand(W, A, TOKEN_DIM)
    ego = torch.cat([ego, tok], -1)
    # road: look-ahead points of the own route
    n = env.route.shape[2]
    road_offsets = getattr(env.cfg, "road_offsets", ROAD_OFFSETS)
    offs = torch.tensor(road_offsets, device=s.device)
    j = torch.clamp(env.idx[..., None] + offs, max=n - 1)  # [W, A, Kr]
    pts = torch.gather(env.route, 2, j[..., None].expand(W, A, len(road_offsets), 2))
    hd = torch.gather(env.heading, 2, j)
    rx, ry = to_ego(pts[..., 0] - x[..., None], pts[..., 1] - y[..., None], psi[..., None])
    typ = torch.where(j == n - 1, 2.0, 1.0).to(s.dtype)
    road = torch.stack([rx / 30.0, ry / 30.0, typ, wrap(hd - psi[..., None])], -1)
    # neighbours: k nearest active vehicles of the same world
    k = min(env.cfg.k_nbr, max(A - 1, 1))
    dist = env.pair_dist.masked_fill(~env.pair_valid, float("inf"))  # [W, A, A]
    d_k, j_k = torch.topk(dist, k, dim=-1, largest=False)
    mask = torch.isfinite(d_k) & (d_k < 60.0)
    take = lambda t: torch.gather(t[:, None, :].expand(W, A, A), 2, j_k)  # noqa: E731
    dx, dy = take(x) - x[..., None], take(y) - y[..., None]
    vwx, vwy = env.v_world.unbind(-1)
    dvx, dvy = take(vwx) - vwx[..., None], take(vwy) - vwy[..., None]
    ex, ey = to_ego(dx, dy, psi[..., None])
    evx, evy = to_ego(dvx, dvy, psi[..., None])
    dpsi = take(psi) - psi[..., None]
    t_k = torch.gather(env.pair_ttc, 2, j_k)
    nbr = torch.stack(
        [
            ex / 30.0,
            ey / 30.0,
            evx / 10.0,
            evy / 10.0,
            torch.cos(dpsi),
            torch.sin(dpsi),
            torch.clamp(t_k, max=10.0) / 10.0,
        ],
        -1,
    )
    nbr = torch.where(mask[..., None], nbr, torch.zeros_like(nbr))
    if k < env.cfg.k_nbr:  # pad (A = 1)
        pad = env.cfg.k_nbr - k
        nbr = torch.cat([nbr, nbr.new_zeros(W, A, pad, NBR_DIM)], 2)
        mask = torch.cat([mask, mask.new_zeros(W, A, pad)], 2)
    return {"ego": ego, "road": road, "nbr": nbr, "nbr_mask": mask}

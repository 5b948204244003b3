"""Procedural road scenes generated in batch: straight, arc, intersection, merge, roundabout lane graphs.

Design choice (spec §2): Waymo topologies become procedural lane graphs.  Each scene yields a list of origin–destination
paths (lane-centre polylines, right-hand traffic); agent a drives path a mod n_paths and agents sharing a path queue
behind each other.  Every path is resampled to ``n_points`` equally spaced points so routes are one tensor
``[W, A, N, 2]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

SCENE_KINDS = ("straight", "arc", "intersection", "merge", "roundabout")
LANE_WIDTH = 3.5


def _arc(cx: float, cy: float, r: float, a0: float, a1: float, n: int = 24) -> np.ndarray:
    t = np.linspace(a0, a1, n)
    return np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], 1)


def _rot(poly: np.ndarray, ang: float) -> np.ndarray:
    c, s = math.cos(ang), math.sin(ang)
    return poly @ np.array([[c, s], [-s, c]])


def resample(poly: np.ndarray, n: int) -> np.ndarray:
    """Resample a polyline [V, 2] to n points equally spaced in arc length."""
    seg = np.linalg.norm(np.diff(poly, axis=0), axis=1)
    keep = np.concatenate([[True], seg > 1e-9])
    poly = poly[keep]
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(poly, axis=0), axis=1))])
    t = np.linspace(0.0, s[-1], n)
    return np.stack([np.interp(t, s, poly[:, 0]), np.interp(t, s, poly[:, 1])], 1)


def scene_paths(
    kind: str, rng: np.random.Generator, arc_radius: tuple[float, float] = (25.0, 50.0), arc_lead: float = 20.0
) -> list[np.ndarray]:
    """Origin–destination lane-centre polylines of one procedural scene (``arc_radius``: inner-lane radius range of
    the arc scene [m]; tighter arcs demand more lateral grip at a given speed, a_y = v²/r; ``arc_lead``: length of
    the straight run-up before the arc [m], i.e. the room to brake before it)."""
    if kind == "straight":
        length = rng.uniform(60, 85)
        return [np.array([[0.0, y], [length, y]]) for y in (0.0, LANE_WIDTH)]
    if kind == "arc":
        r, ang, side = rng.uniform(*arc_radius), rng.uniform(math.pi / 4, math.pi / 2), rng.choice([-1.0, 1.0])
        paths = []
        for off in (0.0, LANE_WIDTH):
            rr = r + off
            lead = np.array([[-arc_lead, -off], [0.0, -off]])
            arc = _arc(0.0, r, rr, -math.pi / 2, -math.pi / 2 + ang)
            end = arc[-1] + 15.0 * np.array([math.cos(ang), math.sin(ang)])
            p = np.concatenate([lead, arc, end[None]])
            paths.append(p * np.array([1.0, side]))
        return paths
    if kind == "intersection":
        arm, o = 32.0, LANE_WIDTH / 2
        base = {  # from the south arm heading north
            "straight": np.array([[o, -arm], [o, arm]]),
            "right": np.concatenate([[[o, -arm]], _arc(o + 4.25, -6.0, 4.25, math.pi, math.pi / 2), [[arm, -o]]]),
            "left": np.concatenate([[[o, -arm]], _arc(-6.0, -6.0, 6.0 + o, 0.0, math.pi / 2), [[-arm, o]]]),
        }
        names = list(base)
        return [_rot(base[names[rng.integers(3)]], k * math.pi / 2) for k in range(4)]
    if kind == "merge":
        main = np.array([[0.0, 0.0], [85.0, 0.0]])
        ramp = np.array([[0.0, -14.0], [30.0, -4.0], [45.0, 0.0], [85.0, 0.0]])
        return [main, ramp]
    if kind == "roundabout":
        r = rng.uniform(12, 16)
        paths = []
        for k in range(4):
            phi = k * math.pi / 2
            turns = rng.integers(1, 3)
            off = (LANE_WIDTH / 2) / r
            phi_out = phi + turns * math.pi / 2
            u = lambda a: np.array([math.cos(a), math.sin(a)])  # noqa: E731 - tiny local helper
            start = (r + 22) * u(phi) + LANE_WIDTH / 2 * u(phi + math.pi / 2)
            arc = _arc(0.0, 0.0, r, phi + off, phi_out - off, 12 * turns)  # counter-clockwise
            end = (r + 22) * u(phi_out) + LANE_WIDTH / 2 * u(phi_out - math.pi / 2)
            paths.append(np.concatenate([start[None], arc, end[None]]))
        return paths
    raise ValueError(f"unknown scene kind {kind!r}")


@dataclass
class SceneBatch:
    """Routes and spawns of W worlds × A agents (torch tensors on one device)."""

    route: torch.Tensor  # [W, A, N, 2] lane-centre points
    heading: torch.Tensor  # [W, A, N] tangent heading
    arclen: torch.Tensor  # [W, A, N] cumulative arc length
    spawn_idx: torch.Tensor  # [W, A] route index of the spawn point
    kind: torch.Tensor  # [W] index into SCENE_KINDS


def generate(
    n_worlds: int,
    n_agents: int,
    kinds: list[str],
    rng: np.random.Generator,
    n_points: int = 64,
    spacing: tuple[float, float] = (12.0, 18.0),
    device: str = "cpu",
    arc_radius: tuple[float, float] = (25.0, 50.0),
    arc_lead: float = 20.0,
) -> SceneBatch:
    """Sample ``n_worlds`` scenes (kind uniformly from ``kinds``) and assign each agent a path and a queue slot."""
    route = np.zeros((n_worlds, n_agents, n_points, 2))
    spawn = np.zeros((n_worlds, n_agents), dtype=np.int64)
    kind_idx = np.zeros(n_worlds, dtype=np.int64)
    for w in range(n_worlds):
        kind = kinds[rng.integers(len(kinds))]
        kind_idx[w] = SCENE_KINDS.index(kind)
        paths = [resample(p, n_points) for p in scene_paths(kind, rng, arc_radius, arc_lead)]
        n_paths = len(paths)
        gap = rng.uniform(*spacing)
        n_queue = math.ceil(n_agents / n_paths)
        for a in range(n_agents):
            pts = paths[a % n_paths]
            q = a // n_paths
            ds = float(np.linalg.norm(pts[1] - pts[0]))
            route[w, a] = pts
            spawn[w, a] = min(int(round((n_queue - 1 - q) * gap / ds)), n_points // 2)
    d = np.diff(route, axis=2)
    head = np.arctan2(d[..., 1], d[..., 0])
    head = np.concatenate([head, head[..., -1:]], axis=2)
    arclen = np.concatenate([np.zeros((n_worlds, n_agents, 1)), np.cumsum(np.linalg.norm(d, axis=-1), axis=2)], axis=2)
    t = lambda x, dt=torch.float32: torch.as_tensor(x, dtype=dt, device=device)  # noqa: E731
    return SceneBatch(t(route), t(head), t(arclen), t(spawn, torch.long), t(kind_idx, torch.long))

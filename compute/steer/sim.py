"""Toy non-reactive driving simulator (spec steer §2 "Toy non-reactive simulator"; a design, numpy).

Straight three-lane road, lanes 0 (left) … 2 (right), 3.5 m wide, lane i centred at y = 3.5·i.  The ego starts
at x = 0 in a lane at 8–15 m/s; 0–6 scripted, non-reactive agents (constant speed ``cv``, braking ``brk``,
cut-in ``cut`` over 1.5 s, stopped obstacle ``stop``); optional lane closure, traffic light and a route command.

A plan is 8 action tokens (0.5 s each): longitudinal {A, K, B} = +1.5 / 0 / −4 m/s² × lateral {s, l, r}
(stay / change one lane left / right, interpolated linearly over the step); v ∈ [0, 20] m/s; 0.1 s sub-steps
(trapezoidal position update, so braking from 12 m/s at −4 m/s² stops after 3 s and exactly 18 m); vehicles are
4.5 × 1.9 m boxes.  ``rollout_ego`` simulates P plans of one scene at once ([P, 41] arrays).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DT = 0.1  # s, sub-step
SUB = 5  # sub-steps per plan step (0.5 s)
STEPS = 8  # plan steps (4 s horizon)
T = STEPS * SUB  # 40 sub-steps; trajectories have T + 1 points
LANE_W = 3.5
N_LANES = 3
CAR_L, CAR_W = 4.5, 1.9
V_MAX = 20.0
ACC = np.array([1.5, 0.0, -4.0])  # A, K, B
LONG = "AKB"
LAT = "slr"  # stay, left (lane − 1), right (lane + 1)
LAT_DIR = np.array([0, -1, 1])
ACTIONS = [a + b for a in LONG for b in LAT]  # action id = 3·long + lat
ACTION_ID = {a: i for i, a in enumerate(ACTIONS)}
YELLOW_S = 3.0  # duration of the yellow phase
KINDS = ("cv", "brk", "cut", "stop")


@dataclass
class Agent:
    lane: int
    x: float  # centre, metres ahead of the ego centre (negative: behind)
    v: float
    kind: str = "cv"
    decel: float = 0.0  # brk: m/s²
    target: int = -1  # cut: lane it moves into
    t_cut: float = 0.0  # cut: start of the 1.5 s lane change


@dataclass
class Scene:
    ego_lane: int
    ego_v: float
    agents: list[Agent] = field(default_factory=list)
    closure: tuple[int, float] | None = None  # (lane, distance of the closed section's start)
    light: tuple[str, float, float] | None = None  # (phase G/Y/R, seconds left in that phase, stop-line distance)
    cmd: str = "K"  # K keep (free), L / R: end one lane to the left / right
    tier: str = "easy"  # hidden difficulty tier: analysis only, never tokenised


def plan_ids(plan: list[str] | tuple[str, ...]) -> np.ndarray:
    return np.array([ACTION_ID[a] for a in plan], dtype=np.int64)


def rollout_ego(scene: Scene, plans: np.ndarray) -> dict[str, np.ndarray]:
    """Ego states of P plans ([P, 8] action ids) at the T + 1 sub-step times: x, y, v [P, T+1]; lane [P, 9]
    (lane index after each step, unclipped: outside 0..2 means off the road)."""
    plans = np.asarray(plans, dtype=np.int64).reshape(-1, STEPS)
    P = plans.shape[0]
    acc = ACC[plans // 3]  # [P, 8]
    dlane = LAT_DIR[plans % 3]  # [P, 8]
    x = np.zeros((P, T + 1))
    y = np.zeros((P, T + 1))
    v = np.zeros((P, T + 1))
    lane = np.zeros((P, STEPS + 1), dtype=np.int64)
    lane[:, 0] = scene.ego_lane
    lane[:, 1:] = scene.ego_lane + np.cumsum(dlane, axis=1)
    v[:, 0] = scene.ego_v
    y[:, 0] = LANE_W * scene.ego_lane
    for k in range(STEPS):
        y0 = LANE_W * lane[:, k]
        for s in range(SUB):
            t = k * SUB + s
            v[:, t + 1] = np.clip(v[:, t] + acc[:, k] * DT, 0.0, V_MAX)
            x[:, t + 1] = x[:, t] + 0.5 * (v[:, t] + v[:, t + 1]) * DT
            y[:, t + 1] = y0 + LANE_W * dlane[:, k] * (s + 1) / SUB
    return {"x": x, "y": y, "v": v, "lane": lane}


def agent_tracks(scene: Scene) -> dict[str, np.ndarray]:
    """Agents' x, y, v [n, T+1] (non-reactive scripts) and ``static`` [n] (stopped obstacles)."""
    n = len(scene.agents)
    t = np.arange(T + 1) * DT
    x = np.zeros((n, T + 1))
    y = np.zeros((n, T + 1))
    v = np.zeros((n, T + 1))
    static = np.zeros(n, dtype=bool)
    for i, a in enumerate(scene.agents):
        y[i] = LANE_W * a.lane
        if a.kind == "stop":
            x[i], v[i], static[i] = a.x, 0.0, True
        elif a.kind == "brk":
            t_stop = a.v / max(a.decel, 1e-9)
            tt = np.minimum(t, t_stop)
            v[i] = a.v - a.decel * tt
            x[i] = a.x + a.v * tt - 0.5 * a.decel * tt**2
        else:
            v[i] = a.v
            x[i] = a.x + a.v * t
            if a.kind == "cut" and a.target >= 0:
                frac = np.clip((t - a.t_cut) / 1.5, 0.0, 1.0)
                y[i] = LANE_W * (a.lane + (a.target - a.lane) * frac)
    return {"x": x, "y": y, "v": v, "static": static}


def time_to_collision(gap: np.ndarray | float, closing: np.ndarray | float) -> np.ndarray:
    """Constant-velocity TTC = bumper gap / closing speed (inf when not closing)."""
    gap = np.asarray(gap, dtype=float)
    closing = np.asarray(closing, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(closing > 1e-9, np.maximum(gap, 0.0) / np.where(closing > 1e-9, closing, 1.0), np.inf)


def light_phase(light: tuple[str, float, float], t: np.ndarray) -> np.ndarray:
    """Phase at times t as 0 G, 1 Y, 2 R (G → Y (3 s) → R; R → G)."""
    phase, left, _ = light
    t = np.asarray(t, dtype=float)
    if phase == "G":
        return np.where(t < left, 0, np.where(t < left + YELLOW_S, 1, 2))
    if phase == "Y":
        return np.where(t < left, 1, 2)
    return np.where(t < left, 2, 0)


def stop_distance(v: float, decel: float = 4.0) -> float:
    """Braking distance at a constant −decel (exact for the trapezoidal update)."""
    return v * v / (2 * decel)

"""SceneFactory's reward terms with configurable weights (spec §2 "Reward"; ``student_vehicle_multiagent_goal_env.py``).

r = w_alive + w_prog·Δs + w_goal·(d_goal,prev − d_goal) + w_head·cos(ψ − ψ_lane) + w_speed·min(v_∥/v_ref, 1)
    − w_vy·v_y² − w_yaw·r² − w_rate·|a − a_prev|² − w_mag·|a|² − w_conflict·throttle·brake − w_prox·exp(−gap/2 m)
    + w_centre·exp(−e_lat²/0.5) − w_lane·[lane touched] + events (goal bonus, collision, off-road crash).
Weights are design choices (the paper's code tunes them per scene); see docs/papers/scenefactory.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class RewardWeights:
    alive: float = 0.0
    progress: float = 0.1  # per metre of route progress
    goal_shaping: float = 0.05  # per metre of goal-distance reduction
    heading: float = 0.02
    speed_to_goal: float = 0.02
    v_ref: float = 10.0
    lateral_velocity: float = 0.02
    yaw_rate: float = 0.05
    action_rate: float = 0.02
    action_magnitude: float = 0.005
    throttle_brake: float = 0.05
    proximity: float = 0.05
    lane_centre: float = 0.03
    lane_touch: float = 0.05
    goal_bonus: float = 5.0
    collision: float = 5.0
    offroad: float = 3.0


def compute_reward(w: RewardWeights, t: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Total reward [W, A] and the per-term breakdown from the step quantities in ``t``."""
    a, a_prev = t["action"], t["prev_action"]
    terms = {
        "alive": torch.full_like(t["progress"], w.alive),
        "progress": w.progress * t["progress"],
        "goal_shaping": w.goal_shaping * (t["goal_dist_prev"] - t["goal_dist"]),
        "heading": w.heading * torch.cos(t["heading_err"]),
        "speed_to_goal": w.speed_to_goal * torch.clamp(t["v_along"] / w.v_ref, -1.0, 1.0),
        "lateral_velocity": -w.lateral_velocity * t["vy"] ** 2,
        "yaw_rate": -w.yaw_rate * t["yaw_rate"] ** 2,
        "action_rate": -w.action_rate * ((a - a_prev) ** 2).sum(-1),
        "action_magnitude": -w.action_magnitude * (a**2).sum(-1),
        "throttle_brake": -w.throttle_brake * torch.clamp(a[..., 0], min=0) * torch.clamp(a[..., 2], min=0),
        "proximity": -w.proximity * torch.exp(-torch.clamp(t["min_gap"], min=0.0) / 2.0),
        "lane_centre": w.lane_centre * torch.exp(-(t["lateral"] ** 2) / 0.5),
        "lane_touch": -w.lane_touch * t["lane_touch"].float(),
        "goal": w.goal_bonus * t["reached"].float(),
        "collision": -w.collision * t["collided"].float(),
        "offroad": -w.offroad * t["offroad"].float(),
    }
    total = torch.zeros_like(t["progress"])
    for v in terms.values():
        total = total + v
    return total, terms

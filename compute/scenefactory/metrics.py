"""Safety and throughput metrics as SceneFactory defines them (spec §2 "Metrics").

* TTC = gap / closing speed (∞ when not closing); a near miss is min TTC < 2 s.
* DRAC = closing² / (2·max(gap, 0.1 m)); per agent the max over neighbours each step, then over the episode (peak).
  Mean peak DRAC averages over spawned agents; high-DRAC rate = share of agents with peak > 3.4 m/s².
* CASPS = env steps × *spawned* controlled agents / wall seconds.
* Success = goals reached / agents spawned.
* Friction-limit diagnostics (ours): peak |a|/(μg) per agent-episode (median reported, and the share above 1, which only
  a kinematic backend can reach) and the mean speed.
"""

from __future__ import annotations

import torch

GAP_FLOOR = 0.1  # m
HIGH_DRAC = 3.4  # m/s²
NEAR_MISS_TTC = 2.0  # s
OVER_GRIP = 1.0  # peak |a|/(μg) above this: more than the tyres can deliver (possible on kinematic backends only)


def closing_speed(dp: torch.Tensor, dv: torch.Tensor) -> torch.Tensor:
    """Closing speed −(Δp·Δv)/|Δp| of j relative to i (Δp = p_j − p_i, Δv = v_j − v_i); > 0 when approaching."""
    dist = torch.clamp(torch.linalg.norm(dp, dim=-1), min=1e-6)
    return -(dp * dv).sum(-1) / dist


def ttc(gap: torch.Tensor, closing: torch.Tensor) -> torch.Tensor:
    """Time to collision gap/closing for closing > 0, else +∞."""
    return torch.where(
        closing > 0, torch.clamp(gap, min=0.0) / torch.clamp(closing, min=1e-9), torch.full_like(gap, float("inf"))
    )


def drac(gap: torch.Tensor, closing: torch.Tensor) -> torch.Tensor:
    """Deceleration rate to avoid a crash closing²/(2·max(gap, 0.1 m)) for closing > 0, else 0."""
    return torch.where(closing > 0, closing**2 / (2.0 * torch.clamp(gap, min=GAP_FLOOR)), torch.zeros_like(gap))


def casps(env_steps: int, spawned_agents: int, seconds: float) -> float:
    """Controlled-agent simulation steps per second (only spawned agents count)."""
    return env_steps * spawned_agents / max(seconds, 1e-12)


def summarize_episodes(ep: dict[str, torch.Tensor]) -> dict[str, float]:
    """Aggregate finished agent-episodes (1-D tensors over spawned agents) into the paper's table metrics."""
    n = int(ep["success"].numel())
    if n == 0:
        return {"episodes": 0}
    peak = ep["peak_drac"].float()
    min_ttc = ep["min_ttc"].float()
    return {
        "episodes": n,
        "success": float(ep["success"].float().mean()),
        "collision": float(ep["collision"].float().mean()),
        "offroad": float(ep["offroad"].float().mean()),
        "mean_peak_drac": float(peak.mean()),
        "high_drac_rate": float((peak > HIGH_DRAC).float().mean()),
        "near_miss_rate": float((min_ttc < NEAR_MISS_TTC).float().mean()),
        "min_ttc_median": float(torch.clamp(min_ttc, max=100.0).median()),
        "return": float(ep["return"].float().mean()),
        **(
            {
                "mean_speed": float(ep["mean_speed"].float().mean()),
                "peak_grip_median": float(ep["peak_grip"].float().median()),
                "over_grip_rate": float((ep["peak_grip"].float() > OVER_GRIP).float().mean()),
            }
            if "peak_grip" in ep
            else {}
        ),
    }

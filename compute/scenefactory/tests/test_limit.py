"""The "limit" driving demand: tighter arcs, faster spawns and a speed reward that pays up to 20 m/s, and the
friction-utilisation diagnostic that shows whether a policy drives near the grip limit (physics ≤ 1, kinematic > 1)."""

import math

import numpy as np
import pytest
import torch

from compute.scenefactory.config import DEMANDS
from compute.scenefactory.dynamics import G
from compute.scenefactory.env import EnvConfig, VecDriveEnv
from compute.scenefactory.metrics import summarize_episodes
from compute.scenefactory.reward import RewardWeights, compute_reward
from compute.scenefactory.run import _env_cfg
from compute.scenefactory.scenes import scene_paths


def _circle_radius(p: np.ndarray) -> float:
    """Radius of the circle through three points."""
    a, b, c = (np.linalg.norm(p[i] - p[j]) for i, j in ((0, 1), (1, 2), (0, 2)))
    cross = abs((p[1, 0] - p[0, 0]) * (p[2, 1] - p[0, 1]) - (p[1, 1] - p[0, 1]) * (p[2, 0] - p[0, 0]))
    return a * b * c / (2 * cross)


@pytest.mark.parametrize("radius", [(15.0, 30.0), (25.0, 50.0)])
def test_arc_radius_range_is_respected(radius: tuple[float, float]) -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        inner = scene_paths("arc", rng, radius)[0]
        r = _circle_radius(inner[[3, 10, 20]])  # points on the arc (after the 2-point lead-in)
        assert radius[0] - 1e-6 <= r <= radius[1] + 1e-6


def _spin_up(backend: str, mu_film: float, speed: float, steer: float) -> VecDriveEnv:
    """One world, one agent on a straight road at ``speed``, held steering ``steer`` for 1 s."""
    cfg = EnvConfig(
        n_worlds=1,
        n_agents=1,
        scenes=("straight",),
        backend=backend,
        v0=(speed, speed),
        wet_fraction=1.0 if mu_film > 0 else 0.0,
        film_mm=(mu_film,),
        max_steps=100,
        offroad_dist=1e9,
    )
    env = VecDriveEnv(cfg, seed=0)
    for _ in range(10):
        env.step(torch.tensor([[[0.0, steer, 0.0]]]))
    return env


@pytest.mark.parametrize("film", [0.0, 12.0])
def test_physics_stays_inside_grip_but_kinematic_does_not(film: float) -> None:
    """Full steering at 18 m/s asks a_y ≈ v² tanδ/L ≈ 86 m/s² ≫ μg.  The single-track tyres cap |a| near μg; the
    kinematic bicycle (no grip limit, as in GPUDrive/Waymax) delivers it, so its peak |a|/(μg) is far above 1."""
    phys = _spin_up("single_track", film, 18.0, 1.0)
    kin = _spin_up("kinematic", film, 18.0, 1.0)
    mu = float(phys.mu[0])
    assert float(phys.peak_grip[0, 0]) <= 1.05
    assert float(phys.peak_grip[0, 0]) >= 0.8  # and it does use the grip it has
    assert float(kin.peak_grip[0, 0]) > 3.0
    # the physics car's heading changes far less than the kinematic car's (it cannot turn as tightly)
    assert abs(float(phys.state[0, 0, 2])) < 0.5 * abs(float(kin.state[0, 0, 2]))
    assert mu == pytest.approx(1.174 if film == 0 else 0.408, abs=0.003)


def test_gentle_driving_reports_low_grip_use() -> None:
    env = _spin_up("single_track", 0.0, 10.0, 0.02)
    a_y = 10.0**2 * math.tan(0.02 * 0.6) / env.p.L  # steady-state lateral acceleration ≈ 0.47 m/s²
    assert float(env.peak_grip[0, 0]) < 3 * a_y / (1.174 * G) + 0.05


def test_limit_demand_rewards_speed_up_to_20_ms() -> None:
    """Speed-to-goal saturates at v_ref: 10 m/s under "normal", 20 m/s under "limit"."""

    def speed_term(w: RewardWeights, v: float) -> float:
        z = torch.zeros(1)
        q = {k: z for k in ("progress", "goal_dist", "goal_dist_prev", "heading_err", "vy", "yaw_rate", "lateral")}
        q.update(action=torch.zeros(1, 3), prev_action=torch.zeros(1, 3), v_along=torch.tensor([v]), min_gap=z + 99)
        q.update({k: torch.zeros(1, dtype=torch.bool) for k in ("lane_touch", "reached", "collided", "offroad")})
        return float(compute_reward(w, q)[1]["speed_to_goal"])

    normal, limit = RewardWeights(), DEMANDS["limit"]["reward"]
    assert speed_term(normal, 18.0) == pytest.approx(speed_term(normal, 10.0))
    assert speed_term(limit, 18.0) > 1.7 * speed_term(limit, 10.0)


def test_limit_demand_config_and_episode_records() -> None:
    cfg = _env_cfg(4, 2, "mix", 30, "limit")
    assert cfg.v0 == (12.0, 20.0) and cfg.arc_radius == (15.0, 30.0)
    assert _env_cfg(4, 2, "mix", 30).v0 == EnvConfig().v0
    with pytest.raises(ValueError):
        _env_cfg(4, 2, "mix", 30, "ludicrous")
    env = VecDriveEnv(cfg, seed=0)
    v0 = torch.hypot(env.state[..., 3], env.state[..., 4])
    assert float(v0.min()) >= 12.0 and float(v0.max()) <= 20.0
    for _ in range(40):
        env.step(torch.zeros(4, 2, 3))
    s = summarize_episodes(env.pop_finished())
    assert s["episodes"] >= 8 and 5.0 < s["mean_speed"] < 20.0 and 0.0 <= s["peak_grip_median"] < 1.1


def test_anticipate_demand_run_up_and_look_ahead() -> None:
    """ "anticipate": a 45 m straight before each arc and 11 look-ahead points reaching ≈ 40 route points ahead."""
    rng = np.random.default_rng(1)
    inner = scene_paths("arc", rng, (15.0, 30.0), 45.0)[0]
    assert abs(inner[0, 0]) == pytest.approx(45.0) and inner[1, 0] == pytest.approx(0.0)
    cfg = _env_cfg(3, 4, "arc", 30, "anticipate")
    assert cfg.arc_lead == 45.0 and cfg.v0 == (8.0, 14.0)
    env = VecDriveEnv(cfg, seed=0)
    o = env.observe()
    assert o["road"].shape == (3, 4, len(cfg.road_offsets), 4)
    ahead = torch.gather(env.arclen, 2, torch.clamp(env.idx + 40, max=63)[..., None])[..., 0]
    here = torch.gather(env.arclen, 2, env.idx[..., None])[..., 0]
    rear = env.idx == 0  # queue tails start at the route start: the farthest look-ahead point is ≥ 50 m away
    assert float((ahead - here)[rear].min()) > 50.0

"""One config dataclass per experiment family, mirroring the declared parameters (apps/scenefactory/experiments.py)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from .reward import RewardWeights
from .scenes import SCENE_KINDS

# Driving demand of the scenes and reward (design; the paper's Waymo scenes and reward tuning are not available).
# "normal": spawn at 7–13 m/s, arcs of radius 25–50 m, speed reward saturating at 10 m/s — learned policies stay far
#   inside the grip envelope (peak |a|/(μg) ≪ 1), so the backend and μ hardly matter.
# "limit": spawn at 12–20 m/s, arcs of radius 15–30 m, speed reward up to 20 m/s (weight 0.05): holding the target
#   speed through arcs, intersection turns and roundabouts needs a_y = v²/r above μg (dry μg ≈ 11.5 m/s², 12 mm film
#   ≈ 4 m/s²), so a policy must brake before curves and conflicts where tyres allow it — or, on a kinematic backend
#   (no grip limit), need not.
# "fast": the "normal" scenes with the "limit" speed reward: feasible on dry roads at 20 m/s except in turns, but on a
#   water film (μg ≈ 4–5 m/s²) the rewarded speeds exceed the grip in arcs, turns and braking for conflicts.
# "anticipate": "limit" arcs and speed reward, but spawns at 8–14 m/s, a 45 m run-up before each arc and a look-ahead
#   of ≈ 60–75 m instead of ≈ 20–35 m: braking from 20 m/s to an arc's grip speed takes ≈ 17 m dry but ≈ 50 m on a
#   12 mm film, so a policy that knows μ can start braking in time; one that does not has to guess.
DEMANDS: dict[str, dict[str, Any]] = {
    "normal": {},
    "limit": {"v0": (12.0, 20.0), "arc_radius": (15.0, 30.0), "reward": RewardWeights(speed_to_goal=0.05, v_ref=20.0)},
    "fast": {"reward": RewardWeights(speed_to_goal=0.05, v_ref=20.0)},
    "anticipate": {
        "v0": (8.0, 14.0),
        "arc_radius": (15.0, 30.0),
        "arc_lead": 45.0,
        "road_offsets": (1, 2, 3, 5, 7, 10, 14, 19, 25, 32, 40),
        "reward": RewardWeights(speed_to_goal=0.05, v_ref=20.0),
    },
}


@dataclass
class _FromParams:
    seed: int = 0
    device: str = "cpu"

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> _FromParams:
        names = {f.name for f in fields(cls)}
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in params.items() if k in names}
        return cls(**kw)


@dataclass
class ThroughputConfig(_FromParams):
    """E1: CASPS of the vectorised pipeline vs the per-vehicle loop over a worlds × agents grid."""

    worlds: tuple[int, ...] = (1, 8, 64, 256)
    agents: tuple[int, ...] = (1, 4, 16)
    backend: str = "single_track"
    steps: int = 20  # timed control steps (after 2 warm-up steps)
    loop_agents: int = 64  # the loop baseline is timed on min(W·A, loop_agents) vehicles (its cost is per vehicle)
    loop_steps: int = 1  # loop steps timed after each vectorised step (interleaved rounds, medians reported)


@dataclass
class TrainConfig(_FromParams):
    """E2: PPO goal reaching with collisions."""

    n_worlds: int = 64
    n_agents: int = 8
    scenes: str = "mix"  # "mix" or one of SCENE_KINDS
    demand: str = "normal"  # key of DEMANDS
    backend: str = "single_track"
    wet_fraction: float = 0.0
    film_mm: float = 5.0
    surface: str = "AC"
    weather_token: bool = True
    iterations: int = 40
    steps: int = 32
    eval_episodes: int = 256
    max_steps: int = 120  # control steps (0.1 s) per world episode
    replay: bool = True


@dataclass
class TransferConfig(_FromParams):
    """E3: train on physics and on kinematic, evaluate each on both (2×2)."""

    n_worlds: int = 64
    n_agents: int = 8
    scenes: str = "mix"
    demand: str = "limit"  # key of DEMANDS
    kinematic_backend: str = "kinematic"  # or "waymax"
    film_mm: float = 0.0  # water film of every world (0 = dry); μ(film) acts on the physics backend only
    iterations: int = 30
    steps: int = 32
    eval_episodes: int = 256
    max_steps: int = 120
    use_cache: bool = True


@dataclass
class WetConfig(_FromParams):
    """E4: friction-aware vs friction-blind policies at several water-film depths."""

    n_worlds: int = 64
    n_agents: int = 8
    scenes: str = "mix"
    demand: str = "normal"  # key of DEMANDS
    depths: tuple[float, ...] = (0.0, 0.5, 5.0, 12.0)
    wet_fraction: float = 0.75
    surface: str = "AC"
    iterations: int = 30
    steps: int = 32
    eval_episodes: int = 256
    max_steps: int = 120
    use_cache: bool = True
    train_films: tuple[float, ...] = field(default=(0.5, 5.0, 12.0))


def scene_list(scenes: str) -> tuple[str, ...]:
    return SCENE_KINDS if scenes == "mix" else (scenes,)

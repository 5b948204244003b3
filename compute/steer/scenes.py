"""Scene generator with hidden difficulty tiers, the reference plan library and the expert (spec steer §2; design).

Tiers (mix 40/30/30, analysis only — never tokenised):

* easy: no light, no closure, no agent that any plausible plan could close on within 4 s; the default plan
  (full acceleration, plus the commanded lane change) is optimal;
* medium: a slow or braking lead, a stopped obstacle, or a red / green light at a comfortable distance;
* hard: a cut-in that leaves under 2 s TTC, the ego lane closed ahead with traffic in the lane to merge into,
  or a yellow-light dilemma (stop if stopping is feasible, otherwise cross before red).

All scene numbers are integers, so the prompt shows the exact scene.  A drawn scene is kept only when its expert
scores ≥ 0.6 (feasible) and its tier shows in the scores: in a hard scene both default plans (A×8, K×8) score
≤ 0.5, in a medium scene full acceleration loses ≥ 0.05 to the expert, in an easy scene the default plan is
within 0.02 of the expert.

**Scene sets** (``scenes``): ``v1`` is the generator above.  ``v2`` changes one hard branch: a cut-in comes with
merge traffic in the neighbour lanes (1–2 cars at −12…+24 m and the ego's speed −3…+2 m/s in each neighbour lane,
0–2 in the lane the cut-in leaves), the way a closure does, so that escaping the cut-in means choosing a gap; the
other branches and the tier tests are those of ``v1``.  The route audit on ``v1`` found that written reasoning
pays on closures only, because the direct route already solves the ``v1`` cut-ins (escape to the free lane).

**Library** (about 135 plans): one longitudinal action for k ∈ {2, 4} steps then another (or one throughout),
times no lane change or one lane change (left/right) at step j ∈ {0, 1, 2, 4}.  **Expert** = best library plan
under the reward score, ties to fewer lane changes, then library order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np

from compute.steer.score import progress_ratio, scores, submetrics
from compute.steer.sim import ACTIONS, LONG, N_LANES, STEPS, Agent, Scene, stop_distance

TIERS = ("easy", "medium", "hard")
TIER_MIX = (0.4, 0.3, 0.3)
LC_STEPS = (0, 1, 2, 4)


@dataclass(frozen=True)
class PlanSpec:
    """a1 for k steps, then a2; optional lane change ``lat`` ∈ {s, l, r} at step j."""

    a1: str
    k: int
    a2: str
    lat: str = "s"
    j: int = 0

    def actions(self) -> list[str]:
        out = []
        for t in range(STEPS):
            lon = self.a1 if t < self.k else self.a2
            out.append(lon + (self.lat if (self.lat != "s" and t == self.j) else "s"))
        return out


@lru_cache(maxsize=1)
def library() -> tuple[list[PlanSpec], np.ndarray]:
    """The reference plans and their action ids [n_plans, 8]."""
    lon = [(a, STEPS, a) for a in LONG] + [(a1, k, a2) for a1 in LONG for a2 in LONG if a1 != a2 for k in (2, 4)]
    lat = [("s", 0)] + [(d, j) for d in "lr" for j in LC_STEPS]
    specs = [PlanSpec(a1, k, a2, d, j) for (a1, k, a2) in lon for (d, j) in lat]
    ids = np.array([[ACTIONS.index(a) for a in s.actions()] for s in specs], dtype=np.int64)
    return specs, ids


@dataclass
class Analysis:
    best_progress: float
    expert: PlanSpec
    expert_score: float
    lib_scores: np.ndarray  # [n_plans] reward score of every library plan


def analyse(scene: Scene, metric: str = "epdms") -> Analysis:
    specs, ids = library()
    m = submetrics(scene, ids)
    ok = (m["NC"] == 1) & (m["DAC"] == 1) & (m["TLC"] == 1)
    best = float(m["progress"][ok].max()) if ok.any() else 0.0
    m["EP"] = progress_ratio(m["progress"], best)
    s = scores(m)[metric]
    top = s.max()
    cand = np.flatnonzero(s >= top - 1e-9)
    e = int(cand[np.argmin(m["n_lc"][cand])])
    return Analysis(best, specs[e], float(s[e]), s)


def _free_lanes(ego_lane: int) -> list[int]:
    return [lane for lane in range(N_LANES) if lane != ego_lane]


def _background(rng: np.random.Generator, scene: Scene, n: int, min_abs_x: int = 25) -> None:
    """Agents in the other lanes, far ahead and faster, or behind and not faster (no TTC threat)."""
    for _ in range(n):
        lane = int(rng.choice(_free_lanes(scene.ego_lane)))
        if rng.random() < 0.6:
            scene.agents.append(Agent(lane, int(rng.integers(min_abs_x + 5, 70)), int(rng.integers(17, 21))))
        else:
            v = int(rng.integers(4, int(scene.ego_v) + 1))
            scene.agents.append(Agent(lane, -int(rng.integers(min_abs_x, 50)), v))


def _easy(rng: np.random.Generator) -> Scene:
    s = Scene(int(rng.integers(0, 3)), int(rng.integers(8, 16)), tier="easy")
    _background(rng, s, int(rng.integers(0, 4)), 30)
    if rng.random() < 0.5:  # a fast lead far ahead in the ego lane
        s.agents.append(Agent(s.ego_lane, int(rng.integers(55, 80)), int(rng.integers(18, 21))))
    if rng.random() < 0.3:
        opts = [c for c, d in (("L", -1), ("R", 1)) if 0 <= s.ego_lane + d < N_LANES]
        s.cmd = str(rng.choice(opts))
    return s


def _medium(rng: np.random.Generator) -> Scene:
    s = Scene(int(rng.integers(0, 3)), int(rng.integers(8, 16)), tier="medium")
    kind = int(rng.integers(0, 4))
    if kind == 0:  # slow lead
        v = max(2, int(s.ego_v) - int(rng.integers(3, 8)))
        s.agents.append(Agent(s.ego_lane, int(rng.integers(20, 40)), v))
    elif kind == 1:  # braking lead
        s.agents.append(Agent(s.ego_lane, int(rng.integers(22, 38)), int(s.ego_v), "brk", int(rng.integers(2, 4))))
    elif kind == 2:  # stopped obstacle
        s.agents.append(Agent(s.ego_lane, int(rng.integers(40, 65)), 0, "stop"))
    else:  # red light to stop at, or a green one
        if rng.random() < 0.6:
            s.light = ("R", int(rng.integers(5, 9)), int(rng.integers(30, 60)))
        else:
            s.light = ("G", int(rng.integers(5, 9)), int(rng.integers(20, 60)))
    _background(rng, s, int(rng.integers(0, 3)))
    return s


def _merge_traffic(rng: np.random.Generator, s: Scene, fewest: dict[int, int] | None = None) -> None:
    """Traffic to merge into: in each neighbour lane (and in the far lane with probability ½) ``fewest[lane]``
    (default 1) to 2 cars at −12…+24 m, at the ego's speed −3…+2 m/s."""
    fewest = fewest or {}
    for lane in _free_lanes(s.ego_lane):
        if abs(lane - s.ego_lane) == 1 or rng.random() < 0.5:
            n = int(rng.integers(fewest.get(lane, 1), 3))
            for _ in range(n):
                s.agents.append(Agent(lane, int(rng.integers(-12, 25)), int(s.ego_v) + int(rng.integers(-3, 3))))


def _hard(rng: np.random.Generator, cutin_traffic: bool = False) -> Scene:
    s = Scene(int(rng.integers(0, 3)), int(rng.integers(8, 16)), tier="hard")
    kind = int(rng.integers(0, 3))
    if kind == 0:  # cut-in from an adjacent lane
        side = int(rng.choice([lane for lane in _free_lanes(s.ego_lane) if abs(lane - s.ego_lane) == 1]))
        v = max(2, int(s.ego_v) - int(rng.integers(3, 8)))
        s.agents.append(Agent(side, int(rng.integers(6, 16)), v, "cut", target=s.ego_lane))
        if cutin_traffic:  # scene set v2: the escape lanes hold traffic (the lane the cut-in leaves may be empty)
            _merge_traffic(rng, s, {side: 0})
        else:
            _background(rng, s, int(rng.integers(0, 2)))
    elif kind == 1:  # ego lane closed ahead; traffic in the lane(s) to merge into
        s.closure = (s.ego_lane, int(rng.integers(18, 40)))
        _merge_traffic(rng, s)
    else:  # yellow-light dilemma
        v = int(s.ego_v)
        line = int(round(stop_distance(v) + 2.25 + rng.integers(-8, 9)))
        s.light = ("Y", int(rng.integers(1, 4)), max(6, line))
        _background(rng, s, int(rng.integers(0, 2)))
    return s


# per scene set, the generator of each tier (v2 differs from v1 in the hard cut-in branch only)
GENERATORS = {
    "v1": {"easy": _easy, "medium": _medium, "hard": _hard},
    "v2": {"easy": _easy, "medium": _medium, "hard": partial(_hard, cutin_traffic=True)},
}
SCENE_SETS = tuple(GENERATORS)

KINDS = {
    "easy": ("cruise", "lane change"),
    "medium": (
        "slow lead",
        "braking lead",
        "stopped obstacle",
        "red light",
    ),  # a green-light draft never passes tier_ok
    "hard": ("cut-in", "closure", "yellow light"),
}


def scene_kind(scene: Scene) -> str:
    """The generator branch a scene came from (analysis only, like the tier): one of ``KINDS[scene.tier]`` for drawn
    scenes (a medium green-light draft costs full acceleration nothing, fails ``tier_ok`` and is redrawn)."""
    if scene.tier == "easy":
        return "cruise" if scene.cmd == "K" else "lane change"
    if scene.closure is not None:
        return "closure"
    if scene.light is not None:
        return {"Y": "yellow light", "R": "red light", "G": "green light"}[scene.light[0]]
    own = {a.kind for a in scene.agents}
    for k, name in (("cut", "cut-in"), ("brk", "braking lead"), ("stop", "stopped obstacle")):
        if k in own:
            return name
    return "slow lead"


def tier_ok(scene: Scene, a: Analysis) -> bool:
    """The tier shows in the scores (see module docstring)."""
    if a.expert_score < 0.6:
        return False
    specs, _ = library()
    idx = {(p.a1, p.k, p.a2, p.lat, p.j): i for i, p in enumerate(specs)}
    s_acc, s_keep = a.lib_scores[idx[("A", STEPS, "A", "s", 0)]], a.lib_scores[idx[("K", STEPS, "K", "s", 0)]]
    if scene.tier == "hard":
        return s_acc <= 0.5 and s_keep <= 0.5
    if scene.tier == "medium":
        return s_acc <= a.expert_score - 0.05
    default = s_acc if scene.cmd == "K" else a.lib_scores[idx[("A", STEPS, "A", scene.cmd.lower(), 0)]]
    return default >= a.expert_score - 0.02


def draw_scene(
    rng: np.random.Generator, tier: str | None = None, max_tries: int = 200, scenes: str = "v1"
) -> tuple[Scene, Analysis]:
    """One scene of ``tier`` (drawn from the 40/30/30 mix when None) of scene set ``scenes`` that passes
    ``tier_ok``."""
    if scenes not in SCENE_SETS:
        raise ValueError(f"scenes must be one of {SCENE_SETS}")
    tier = tier or TIERS[int(rng.choice(3, p=TIER_MIX))]
    generate = GENERATORS[scenes][tier]
    for _ in range(max_tries):
        s = generate(rng)
        a = analyse(s)
        if tier_ok(s, a):
            return s, a
    raise RuntimeError(f"could not draw a valid {tier} scene")

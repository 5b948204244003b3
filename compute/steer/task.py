"""The driving planning task in the core's Task protocol (sample / prompt / verify / solution).

``verify`` decodes the plan with the shared parser, simulates it and returns the reward score (EPDMS-lite by
default, or PDMS), ``correct`` = within 0.05 of the expert's score, and an info dict with both scores, every
sub-metric, the route and the hidden tier (for analysis only).  Malformed output scores 0 and never raises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compute.core.tasks.base import Problem, sample_filtered
from compute.steer.scenes import SCENE_SETS, draw_scene
from compute.steer.score import scores, submetrics
from compute.steer.sim import plan_ids
from compute.steer.traces import COT_STYLES, DIRECT, THINK, make_tokenizer, parse_plan, response_text, scene_text

METRICS = ("epdms", "pdms")


def scene_problem(scene: Any, analysis: Any) -> Problem:
    text = scene_text(scene)
    return Problem(
        key=text,
        question=text,
        answer=analysis.expert.actions(),
        data={"scene": scene, "analysis": analysis, "tier": scene.tier},
    )


class DrivingTask:
    name = "driving"

    def __init__(
        self,
        metric: str = "epdms",
        p_cot: float = 0.8,
        tiers: tuple[str, ...] | None = None,
        cot: str = "lanes",
        scenes: str = "v1",
    ) -> None:
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}")
        if cot not in COT_STYLES:
            raise ValueError(f"cot must be one of {COT_STYLES}")
        if scenes not in SCENE_SETS:
            raise ValueError(f"scenes must be one of {SCENE_SETS}")
        self.scenes = scenes  # the scene generator set (scenes.py)
        self.cot = cot  # the reasoning-trace style of the SFT CoT traces (traces.py)
        self.metric = metric
        self.p_cot = p_cot  # share of CoT traces in SFT (the over-reasoning start)
        self.tiers = tiers  # restrict sampling to these tiers (analysis); None = the 40/30/30 mix
        self.tokenizer = make_tokenizer()

    def sample(self, n: int, rng: np.random.Generator, split: str) -> list[Problem]:
        def draw(r: np.random.Generator) -> Problem:
            tier = None if self.tiers is None else self.tiers[int(r.integers(len(self.tiers)))]
            return scene_problem(*draw_scene(r, tier, scenes=self.scenes))

        return sample_filtered(n, rng, split, draw)

    def prompt(self, problem: Problem, role: str = "solve", ctx: dict[str, Any] | None = None) -> list[int]:
        return [self.tokenizer.bos_id, *self.tokenizer.encode(problem.question)]

    def evaluate_plan(self, problem: Problem, plan: list[str]) -> dict[str, float]:
        a = problem.data["analysis"]
        m = submetrics(problem.data["scene"], plan_ids(plan)[None], a.best_progress)
        out = {k: float(v[0]) for k, v in m.items()}
        out.update({k: float(v[0]) for k, v in scores(m).items()})
        return out

    def verify(self, problem: Problem, text: str) -> tuple[float, bool, dict[str, Any]]:
        route, plan = parse_plan(text)
        info: dict[str, Any] = {"route": route, "tier": problem.data["tier"], "parsed": plan is not None}
        if plan is None:
            info.update({"pdms": 0.0, "epdms": 0.0})
            return 0.0, False, info
        info.update(self.evaluate_plan(problem, plan))
        r = info[self.metric]
        return r, bool(r >= problem.data["analysis"].expert_score - 0.05), info

    def solution(self, problem: Problem, rng: np.random.Generator | None = None) -> str:
        rng = rng if rng is not None else np.random.default_rng(0)
        route = THINK if rng.random() < self.p_cot else DIRECT
        key = f"response_{self.cot}_{route}"  # the trace is deterministic given the scene: cache it
        if key not in problem.data:
            problem.data[key] = response_text(problem.data["scene"], problem.data["analysis"].expert, route, self.cot)
        return problem.data[key]

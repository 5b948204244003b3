"""The route audit: scene kinds and the per-kind Δ table on hand-made numbers (known answers)."""

from __future__ import annotations

import numpy as np

from compute.steer.evaluate import audit_table
from compute.steer.scenes import KINDS, TIERS, draw_scene, scene_kind
from compute.steer.sim import Agent, Scene
from compute.steer.traces import DIRECT, THINK


def test_scene_kind_hand_made_and_every_generator_branch() -> None:
    assert scene_kind(Scene(1, 10, tier="easy")) == "cruise"
    assert scene_kind(Scene(1, 10, cmd="L", tier="easy")) == "lane change"
    assert scene_kind(Scene(1, 10, closure=(1, 30), tier="hard")) == "closure"
    assert scene_kind(Scene(1, 10, light=("Y", 2, 30), tier="hard")) == "yellow light"
    assert scene_kind(Scene(1, 10, [Agent(0, 50, 20), Agent(2, 10, 6, "cut", target=1)], tier="hard")) == "cut-in"
    assert scene_kind(Scene(1, 10, [Agent(1, 30, 10, "brk", 3)], tier="medium")) == "braking lead"
    assert scene_kind(Scene(1, 10, [Agent(1, 30, 4)], tier="medium")) == "slow lead"
    rng = np.random.default_rng(0)
    for t in TIERS:
        seen = {scene_kind(draw_scene(rng, t)[0]) for _ in range(80)}
        assert seen == set(KINDS[t]), t  # every branch of the generator is reached and named


def test_audit_table_known_answers() -> None:
    # 2 closures where CoT pays (0.8 vs 0.5 at 30 vs 10 tokens: Δ = 0.3 − 1e-3·20 = 0.28), 2 yellow scenes where it
    # does not (0.60 vs 0.62: Δ = −0.04), 2 easy scenes where both score 1 (Δ = −0.02, the token cost only)
    tiers = ["hard", "hard", "hard", "hard", "easy", "easy"]
    kinds = ["closure", "closure", "yellow light", "yellow light", "cruise", "cruise"]
    cot = {
        "score": np.array([0.8, 0.8, 0.6, 0.6, 1.0, 1.0]),
        "tokens": np.full(6, 30.0),
        "greedy": np.array([0.9, 0.7, 0.5, 0.6, 1.0, 1.0]),
    }
    direct = {
        "score": np.array([0.5, 0.5, 0.62, 0.62, 1.0, 1.0]),
        "tokens": np.full(6, 10.0),
        "greedy": np.array([0.4, 0.6, 0.7, 0.6, 1.0, 1.0]),
    }
    policy = np.array([True, False, True, False, False, False])
    rows, s = audit_table(tiers, kinds, cot, direct, 1e-3, policy, np.array([1.0, 0.9, 0.8, 0.8, 1.0, 1.0]))
    by = {r["kind"]: r for r in rows}
    assert [r["kind"] for r in rows] == ["cruise", "closure", "yellow light"]  # tier order, then first seen
    assert abs(by["closure"]["delta"] - 0.28) < 1e-12 and by["closure"]["delta_se"] == 0.0
    assert abs(by["yellow light"]["delta"] + 0.04) < 1e-12 and abs(by["cruise"]["delta"] + 0.02) < 1e-12
    assert (
        abs(by["closure"]["expert"] - 0.95) < 1e-12
        and "expert" not in audit_table(tiers, kinds, cot, direct, 0, policy)[0][0]
    )
    assert abs(by["closure"]["greedy_cot"] - 0.8) < 1e-12 and abs(by["closure"]["greedy_direct"] - 0.5) < 1e-12
    assert abs(by["closure"]["greedy_cot_minus_direct"] - 0.3) < 1e-12
    assert abs(by["closure"]["greedy_se"] - 0.2) < 1e-12  # differences 0.5 and 0.1: sd 0.2828 / √2
    assert [by[k]["oracle_route"] for k in ("closure", "yellow light", "cruise")] == [THINK, DIRECT, DIRECT]
    assert by["closure"]["policy_cot_ratio"] == 0.5 and by["cruise"]["policy_cot_ratio"] == 0.0
    assert s["oracle_cot_hard"] == 0.5 and s["oracle_cot_easy"] == 0.0 and s["policy_cot_hard"] == 0.5
    assert abs(s["oracle_greedy_hard"] - (0.9 + 0.7 + 0.7 + 0.6) / 4) < 1e-12  # CoT on closures, direct on yellow
    assert abs(s["forced_cot_greedy_hard"] - 0.675) < 1e-12 and abs(s["forced_direct_greedy_hard"] - 0.575) < 1e-12
    assert s["agree_hard"] == 0.5 and s["agree_easy"] == 1.0 and abs(s["agree_all"] - 4 / 6) < 1e-12
    # a λ large enough to price out the closures' gain flips their oracle route
    _, s2 = audit_table(tiers, kinds, cot, direct, 0.02, policy)
    assert s2["oracle_cot_hard"] == 0.0

"""Scene sets: v2 changes only the hard cut-in branch (merge traffic in the escape lanes); v1 is kept bit for bit."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from compute.steer.config import SteerConfig
from compute.steer.scenes import draw_scene, scene_kind, tier_ok
from compute.steer.task import DrivingTask
from compute.steer.traces import reachable_lanes, scene_text


def test_v1_checkpoint_hash_is_kept() -> None:
    # the medium `rel` checkpoint every v1 measurement in docs/papers/steer.md used
    vocab = DrivingTask().tokenizer.vocab_size
    cfg = SteerConfig(size="medium", sft_tokens=3_000_000, sft_lr=2e-3, n_pool=20_000, cot="rel")
    assert cfg.sft_config().key(vocab) == "3053ec624fdeec41"
    cfg.scenes = "v2"
    assert cfg.sft_config().key(vocab) != "3053ec624fdeec41"


@pytest.mark.parametrize("tier", ["easy", "medium"])
def test_v2_leaves_easy_and_medium_unchanged(tier: str) -> None:
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    for _ in range(30):
        assert scene_text(draw_scene(a, tier)[0]) == scene_text(draw_scene(b, tier, scenes="v2")[0])


def test_v2_cut_ins_bring_merge_traffic() -> None:
    rng = np.random.default_rng(0)
    n_cut = 0
    for _ in range(120):
        s, a = draw_scene(rng, "hard", scenes="v2")
        assert tier_ok(s, a) and s.tier == "hard"
        if scene_kind(s) != "cut-in":
            continue
        n_cut += 1
        cut = next(x for x in s.agents if x.kind == "cut")
        assert cut.target == s.ego_lane and abs(cut.lane - s.ego_lane) == 1
        for lane in reachable_lanes(s):
            if lane in (s.ego_lane, cut.lane):
                continue
            near = [x for x in s.agents if x.lane == lane and x.kind == "cv" and -12 <= x.x <= 24]
            assert 1 <= len(near) <= 2  # the other escape lane always holds a gap to choose
            assert all(abs(x.v - s.ego_v) <= 3 for x in near)
    assert n_cut >= 25


def test_v1_cut_ins_have_free_escape_lanes_nearby() -> None:
    # the v1 branch: background cars only, none within 25 m of the ego
    rng = np.random.default_rng(0)
    for _ in range(120):
        s, _ = draw_scene(rng, "hard")
        if scene_kind(s) == "cut-in":
            assert all(abs(x.x) >= 25 for x in s.agents if x.kind != "cut")


def test_unknown_scene_set_is_refused() -> None:
    with pytest.raises(ValueError, match="scenes must be one of"):
        DrivingTask(scenes="v3")
    with pytest.raises(ValueError, match="scenes must be one of"):
        draw_scene(np.random.default_rng(0), "hard", scenes="v0")


def test_v1_policy_names_are_kept() -> None:
    # the seed-0 STEER policy of the route audit in docs/papers/steer.md
    from compute.steer.run import policy_name

    p = {"size": "medium", "sft_tokens": 3_000_000, "sft_lr": 2e-3, "n_pool": 20_000, "cot": "rel", "lr": 5e-5}
    p.update({"route_weight": 4.0, "steps": 200, "eval_every": 50, "lam": 1e-3, "method": "steer", "seed": 0})
    assert policy_name(SteerConfig.from_params(p)) == "steer-s0-5f9bbf2a4312"
    assert policy_name(SteerConfig.from_params({**p, "scenes": "v2"})) != "steer-s0-5f9bbf2a4312"
    assert policy_name(SteerConfig.from_params({**p, "cot_weight": 2.0})) != "steer-s0-5f9bbf2a4312"


def test_v1_scenes_are_those_of_every_earlier_measurement() -> None:
    # digest of 300 mixed-tier and 3 × 100 per-tier scene prompts, computed with the generator before scene sets
    # existed (commit ec1d5ee): the v1 stream, closures' merge traffic included, is unchanged
    h = hashlib.sha256()
    rng = np.random.default_rng(0)
    for _ in range(300):
        h.update(scene_text(draw_scene(rng)[0]).encode())
    for tier in ("easy", "medium", "hard"):
        rng = np.random.default_rng(1)
        for _ in range(100):
            h.update(scene_text(draw_scene(rng, tier)[0]).encode())
    assert h.hexdigest() == "1713a15ab76268d365fdfd77ba70f69bdacd9a071bf583eddba88c34bd71810b"

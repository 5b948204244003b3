"""E3's bird's-eye viewer and scene picking on hand-made scenes (known geometry)."""

from __future__ import annotations

import numpy as np

from compute.steer.inspector import _display, pick_view, scene_traces, viewer_figure
from compute.steer.sim import LANE_W, Agent, Scene


def _scene() -> Scene:
    s = Scene(ego_lane=1, ego_v=10, tier="hard")
    s.agents.append(Agent(0, 12, 6, "cut", target=1))
    s.closure = (1, 30)
    s.light = ("Y", 2, 35)
    return s


def test_plan_trace_is_the_simulated_trajectory() -> None:
    s = _scene()
    keep = ["Ks"] * 8  # constant 10 m/s for 4 s: 40 m, lane 1 throughout
    brake = ["Bs"] * 8  # −4 m/s² from 10 m/s stops after 2.5 s and 12.5 m
    tr = {t["name"].split(":")[0]: t for t in scene_traces(s, keep, brake)}
    pol, exp = tr["policy plan"], tr["expert plan"]
    assert len(pol["x"]) == 9 and pol["x"][0] == 0.0 and abs(pol["x"][-1] - 40.0) < 1e-9
    assert all(abs(y - LANE_W) < 1e-9 for y in pol["y"])
    assert abs(exp["x"][-1] - 12.5) < 1e-9 and exp["line"]["dash"] == "dash"
    # the cut-in agent ends in the ego lane; the closure covers lane 1 from 30 m; the light is yellow at t = 0
    track = next(t for t in scene_traces(s, keep, keep) if t["name"].endswith("track"))
    assert track["y"][0] == 0.0 and abs(track["y"][-1] - LANE_W) < 1e-9 and abs(track["x"][-1] - (12 + 6 * 4)) < 1e-9
    assert tr["lane 1 closed"]["x"][0] == 30 and min(tr["lane 1 closed"]["y"]) == LANE_W / 2
    light = next(t for t in tr.values() if t["name"].startswith("light"))
    assert light["x"] == [35, 35] and light["line"]["color"] == "#e6b800"


def test_unparsed_plan_draws_no_policy_trace() -> None:
    names = [t["name"] for t in scene_traces(_scene(), None, ["Ks"] * 8)]
    assert not any(n.startswith("policy plan") for n in names) and any(n.startswith("expert plan") for n in names)


def test_slider_shows_exactly_one_scene_per_step() -> None:
    items = [
        {
            "scene": _scene(),
            "plan": ["Ks"] * 8,
            "expert": ["Bs"] * 8,
            "title": f"s{k}",
            "prompt": "p",
            "response": "<think> a b | Ks Ks <eos>",
        }
        for k in range(3)
    ]
    items[1]["scene"] = Scene(ego_lane=0, ego_v=12, tier="easy")  # fewer traces: no agent, closure or light
    fig = viewer_figure(items)
    steps = fig["layout"]["sliders"][0]["steps"]
    masks = np.array([st["args"][0]["visible"] for st in steps])
    assert masks.shape == (3, len(fig["data"]))
    assert (masks.sum(0) == 1).all()  # every trace belongs to exactly one scene
    assert masks.sum(1).tolist() == [len(scene_traces(it["scene"], it["plan"], it["expert"])) for it in items]
    assert [d["visible"] for d in fig["data"]] == masks[0].tolist()
    assert [st["args"][1]["title"]["text"] for st in steps] == ["s0", "s1", "s2"]
    assert "⟨think⟩" in steps[0]["args"][1]["annotations"][0]["text"] and "<think>" not in str(fig["layout"])


def test_pick_view_round_robin_over_tiers() -> None:
    tiers = ["easy", "easy", "hard", "medium", "easy", "hard", "easy"]
    assert pick_view(tiers, 5) == [0, 3, 2, 1, 5]
    assert sorted(pick_view(tiers, 50)) == list(range(7))  # capped by the scenes there are
    assert pick_view(["easy"] * 4, 2) == [0, 1]


def test_display_wraps_and_renames_route_tokens() -> None:
    out = _display("<direct> " + "Ks " * 60, width=40)
    assert out.startswith("⟨direct⟩") and all(len(line) <= 40 for line in out.split("<br>"))

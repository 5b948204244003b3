"""Known answers for the simulator and the NAVSIM-style scores on hand-made scenes (spec steer §5)."""

from __future__ import annotations

import numpy as np
import pytest

from compute.steer.scenes import TIERS, analyse, draw_scene, library
from compute.steer.score import epdms, epdms_lite, pdms, submetrics
from compute.steer.sim import Agent, Scene, plan_ids, rollout_ego, time_to_collision


def plan(*tokens: str) -> np.ndarray:
    """``plan("Ks")`` → 8 × Ks; otherwise exactly the 8 given tokens."""
    toks = list(tokens) * 8 if len(tokens) == 1 else list(tokens)
    return plan_ids(toks)[None]


# ------------------------------------------------------------------ formulas
def test_pdms_formula() -> None:
    assert pdms(1, 1, 1, 1, 1) == pytest.approx(1.0)
    assert pdms(0, 1, 1, 1, 1) == pytest.approx(0.0)
    assert pdms(0.5, 1, 1, 1, 1) == pytest.approx(0.5)
    assert pdms(1, 1, 1, 0.5, 1) == pytest.approx(9.5 / 12)


def test_epdms_renormalises_missing_terms() -> None:
    assert epdms(1, 1, ttc=0, ep=1, lk=1, hc=1, ec=None) == pytest.approx(9 / 14)
    assert epdms(1, 1, ttc=1, ep=1, ddc=1, tlc=1, lk=1, hc=1, ec=1) == pytest.approx(1.0)
    assert epdms(1, 1, ttc=1, ep=1, tlc=0) == pytest.approx(0.0)
    assert epdms_lite(1, 1, 1, 1, 0.5, 1, 0) == pytest.approx((5 + 2.5 + 2) / 14)


# ------------------------------------------------------------------ kinematics
def test_keep_travels_4v_and_braking_stops_in_3s_18m() -> None:
    ego = rollout_ego(Scene(1, 10.0), plan("Ks"))
    assert ego["x"][0, -1] == pytest.approx(40.0)
    ego = rollout_ego(Scene(1, 12.0), plan("Bs"))
    v, x = ego["v"][0], ego["x"][0]
    assert v[30] == pytest.approx(0.0, abs=1e-9) and v[29] > 0  # stops exactly at t = 3.0 s
    assert x[-1] == pytest.approx(18.0)
    ego = rollout_ego(Scene(1, 19.0), plan("As"))
    assert ego["v"].max() == pytest.approx(20.0)  # speed cap


def test_lane_change_moves_one_lane_in_one_step() -> None:
    ego = rollout_ego(Scene(1, 10.0), plan("Kl", "Ks", "Ks", "Ks", "Ks", "Ks", "Ks", "Ks"))
    assert ego["y"][0, 5] == pytest.approx(0.0) and ego["y"][0, 0] == pytest.approx(3.5)
    assert list(ego["lane"][0][:2]) == [1, 0]


# ------------------------------------------------------------------ sub-metrics on hand-made scenes
def test_ttc_closed_form_and_threshold() -> None:
    assert float(time_to_collision(10.0, 10.0)) == pytest.approx(1.0)
    assert np.isinf(time_to_collision(10.0, -1.0))
    # stopped obstacle 30 m ahead (gap 25.5 m); keeping 10 m/s brings TTC under 1 s before the 4 s horizon
    s = Scene(1, 10.0, [Agent(1, 30.0, 0.0, "stop")])
    m = submetrics(s, np.vstack([plan("Ks"), plan("Bs")]))
    assert list(m["TTC"]) == [0.0, 1.0]


def test_collision_vehicle_static_and_rear_end() -> None:
    lead = Scene(1, 15.0, [Agent(1, 12.0, 5.0)])
    assert submetrics(lead, plan("As"))["NC"][0] == 0.0  # hits a moving vehicle: 0
    wall = Scene(1, 15.0, [Agent(1, 20.0, 0.0, "stop")])
    assert submetrics(wall, plan("As"))["NC"][0] == 0.5  # static object: ½
    rear = Scene(1, 5.0, [Agent(1, -10.0, 15.0)])  # a fast car from behind rear-ends the ego in its lane
    m = submetrics(rear, plan("Bs"))
    assert m["NC"][0] == 1.0  # not at fault


def test_wall_braking_distance_consistent() -> None:
    # braking from 15 m/s needs 28.1 m; a wall whose rear is 16 m ahead is hit, one 40 m ahead is not
    near = Scene(1, 15.0, [Agent(1, 20.5, 0.0, "stop")])
    far = Scene(1, 15.0, [Agent(1, 40.0, 0.0, "stop")])
    assert submetrics(near, plan("Bs"))["NC"][0] == 0.5
    assert submetrics(far, plan("Bs"))["NC"][0] == 1.0


def test_drivable_area_offroad_and_closure() -> None:
    s = Scene(0, 10.0)
    m = submetrics(s, np.vstack([plan("Kl", *["Ks"] * 7), plan("Kr", *["Ks"] * 7)]))
    assert list(m["DAC"]) == [0.0, 1.0]
    closed = Scene(1, 10.0, closure=(1, 20.0))
    m = submetrics(closed, np.vstack([plan("Ks"), plan("Kl", *["Ks"] * 7)]))
    assert list(m["DAC"]) == [0.0, 1.0]


def test_comfort_flip_and_lane_changes() -> None:
    s = Scene(1, 10.0)
    m = submetrics(
        s,
        np.vstack(
            [
                plan("As", "Bs", "Ks", "Ks", "Ks", "Ks", "Ks", "Ks"),  # A→B flip
                plan("As", "Ks", "Bs", "Ks", "Ks", "Ks", "Ks", "Ks"),  # via K: fine
                plan("Kl", "Kr", "Kl", "Ks", "Ks", "Ks", "Ks", "Ks"),  # 3 lane changes
                plan("Kl", "Kr", "Ks", "Ks", "Ks", "Ks", "Ks", "Ks"),  # 2 lane changes
            ]
        ),
    )
    assert list(m["C"]) == [0.0, 1.0, 0.0, 1.0]


def test_traffic_light_compliance() -> None:
    red = Scene(1, 10.0, light=("R", 9.0, 20.0))
    m = submetrics(red, np.vstack([plan("Ks"), plan("Bs")]))
    assert list(m["TLC"]) == [0.0, 1.0]  # crossing on red → 0
    # yellow for 1 s, line 30 m ahead at 10 m/s: stopping (12.5 m) feasible → crossing on yellow/red is a violation
    y_stop = Scene(1, 10.0, light=("Y", 1.0, 30.0))
    assert submetrics(y_stop, plan("Ks"))["TLC"][0] == 0.0
    # yellow for 2 s, line 8 m ahead at 12 m/s: stopping (18 m) infeasible → crossing on yellow is allowed
    y_go = Scene(1, 12.0, light=("Y", 2.0, 8.0))
    assert submetrics(y_go, plan("Ks"))["TLC"][0] == 1.0
    green = Scene(1, 10.0, light=("G", 9.0, 20.0))
    assert submetrics(green, plan("Ks"))["TLC"][0] == 1.0


def test_route_command() -> None:
    s = Scene(1, 10.0, cmd="L")
    m = submetrics(s, np.vstack([plan("Ks"), plan("Kl", *["Ks"] * 7), plan("Kr", *["Ks"] * 7)]))
    assert list(m["RC"]) == [0.0, 1.0, 0.0]


def test_progress_ratio_uses_best_admissible_library_plan() -> None:
    s = Scene(1, 10.0)
    a = analyse(s)
    assert a.best_progress == pytest.approx(submetrics(s, plan("As"))["progress"][0])
    m = submetrics(s, plan("Ks"), a.best_progress)
    assert m["EP"][0] == pytest.approx(40.0 / a.best_progress)


# ------------------------------------------------------------------ library, expert, tiers
def test_expert_is_best_library_plan() -> None:
    specs, ids = library()
    assert 60 <= len(specs) <= 200 and len({tuple(r) for r in ids}) == len(specs)
    rng = np.random.default_rng(3)
    for tier in TIERS:
        s, a = draw_scene(rng, tier)
        assert a.expert_score >= a.lib_scores.max() - 1e-12
        assert a.expert_score >= 0.6


def test_hard_scenes_punish_default_plans_and_easy_scenes_do_not() -> None:
    rng = np.random.default_rng(5)
    specs, _ = library()
    i_acc = next(i for i, p in enumerate(specs) if p.a1 == "A" and p.k == 8 and p.lat == "s")
    for _ in range(5):
        _, a = draw_scene(rng, "hard")
        assert a.lib_scores[i_acc] <= 0.5
        s, a = draw_scene(rng, "easy")
        if s.cmd == "K":
            assert a.lib_scores[i_acc] >= a.expert_score - 0.02

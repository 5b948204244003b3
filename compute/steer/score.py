"""NAVSIM-style scores (spec steer §2 "Scoring").

* PDMS (NAVSIM v1, exact formula) = NC·DAC·(5·TTC + 5·EP + 2·C)/12;
* EPDMS (NAVSIM v2) = NC·DAC·DDC·TLC·(5·TTC + 5·EP + 2·LK + 2·HC + 2·EC)/16, missing terms dropped and the
  remaining weights renormalised;
* EPDMS-lite (toy, design) = NC·DAC·TLC·(5·TTC + 5·EP + 2·C + 2·RC)/14.

Sub-metrics of the toy simulator (design where NAVSIM's definitions need maps/agents we do not have):

* NC (no at-fault collision) ∈ {0, ½, 1}: box overlap at any sub-step; ½ for a stopped obstacle, 0 for a vehicle;
  a collision is not the ego's fault when the agent is behind the ego and the ego is still in its starting lane
  (rear-ended, as NAVSIM's at-fault rule), judged at the first contact.
* DAC: 0 when a lane change leaves the three lanes, or the ego centre is in a closed lane past the closure start.
* TTC: 0 when the constant-velocity time to collision with an agent ahead that overlaps the ego laterally drops
  below 1 s at any sub-step.
* EP: progress ÷ best progress of the library plans with NC = DAC = TLC = 1 (EP = 1 if that is under 5 m), in [0, 1].
* C: 0 on an accelerate↔brake flip between consecutive steps or more than 2 lane changes.
* TLC: 0 for crossing the stop line on red, or on yellow when stopping before it was feasible at t = 0.
* RC: route command — L / R require ending one lane left / right of the start lane; K is always met.
"""

from __future__ import annotations

import numpy as np

from compute.steer.sim import (
    CAR_L,
    CAR_W,
    DT,
    LANE_W,
    N_LANES,
    STEPS,
    SUB,
    Scene,
    T,
    agent_tracks,
    light_phase,
    rollout_ego,
    stop_distance,
    time_to_collision,
)

PDMS_W = {"TTC": 5.0, "EP": 5.0, "C": 2.0}
EPDMS_W = {"TTC": 5.0, "EP": 5.0, "LK": 2.0, "HC": 2.0, "EC": 2.0}
LITE_W = {"TTC": 5.0, "EP": 5.0, "C": 2.0, "RC": 2.0}
TTC_MIN = 1.0  # s
EP_MIN_PROGRESS = 5.0  # m


def weighted(mult: list[float | np.ndarray], terms: dict[str, float | np.ndarray | None], w: dict[str, float]):
    """Π multipliers × Σ w_k·term_k / Σ w_k over the terms that are present (None = missing → renormalised)."""
    num, den = 0.0, 0.0
    for k, wk in w.items():
        if terms.get(k) is not None:
            num = num + wk * np.asarray(terms[k], dtype=float)
            den += wk
    out = num / den if den > 0 else 1.0
    for m in mult:
        if m is not None:
            out = out * np.asarray(m, dtype=float)
    return out


def pdms(nc, dac, ttc, ep, c):
    """NAVSIM v1 PDM score."""
    return weighted([nc, dac], {"TTC": ttc, "EP": ep, "C": c}, PDMS_W)


def epdms(nc, dac, ttc, ep, ddc=None, tlc=None, lk=None, hc=None, ec=None):
    """NAVSIM v2 extended PDM score; missing (None) terms are dropped and the weights renormalised."""
    return weighted([nc, dac, ddc, tlc], {"TTC": ttc, "EP": ep, "LK": lk, "HC": hc, "EC": ec}, EPDMS_W)


def epdms_lite(nc, dac, tlc, ttc, ep, c, rc):
    """The toy score: NC·DAC·TLC·(5·TTC + 5·EP + 2·C + 2·RC)/14."""
    return weighted([nc, dac, tlc], {"TTC": ttc, "EP": ep, "C": c, "RC": rc}, LITE_W)


def submetrics(scene: Scene, plans: np.ndarray, best_progress: float | None = None) -> dict[str, np.ndarray]:
    """NC, DAC, TTC, C, TLC, RC, progress (and EP when ``best_progress`` is given) for P plans [P, 8]."""
    plans = np.asarray(plans, dtype=np.int64).reshape(-1, STEPS)
    P = plans.shape[0]
    ego = rollout_ego(scene, plans)
    ag = agent_tracks(scene)
    ex, ey, ev = ego["x"], ego["y"], ego["v"]
    lane = ego["lane"]
    # --- drivable area: off the road, or inside a closed section
    dac = np.all((lane >= 0) & (lane < N_LANES), axis=1).astype(float)
    if scene.closure is not None:
        cl, at = scene.closure
        in_lane = np.abs(ey - LANE_W * cl) < LANE_W / 2
        dac = dac * (~np.any(in_lane & (ex + CAR_L / 2 > at), axis=1))
    # --- collisions and TTC against every agent, at sub-steps 1..T
    nc = np.ones(P)
    ttc_ok = np.ones(P)
    start_y = LANE_W * scene.ego_lane
    for i in range(len(ag["static"])):
        ax, ay, av = ag["x"][i], ag["y"][i], ag["v"][i]
        dx = ax[None, 1:] - ex[:, 1:]  # agent ahead > 0
        lat = np.abs(ay[None, 1:] - ey[:, 1:]) < CAR_W
        hit = (np.abs(dx) < CAR_L) & lat
        rear_ended = (dx < 0) & (np.abs(ey[:, 1:] - start_y) < 1e-6)
        first = np.argmax(hit, axis=1)  # fault is judged at the first contact (agents drive through)
        at_fault = hit.any(axis=1) & ~rear_ended[np.arange(P), first]
        nc = np.minimum(nc, np.where(at_fault, 0.5 if ag["static"][i] else 0.0, 1.0))
        ahead = lat & (dx > 0)
        ttc = time_to_collision(dx - CAR_L, ev[:, 1:] - av[None, 1:])
        ttc_ok = ttc_ok * ~np.any(ahead & (ttc < TTC_MIN), axis=1)
    # --- comfort: no A↔B flip between consecutive steps, at most 2 lane changes
    lon = plans // 3
    flip = np.any(((lon[:, 1:] == 0) & (lon[:, :-1] == 2)) | ((lon[:, 1:] == 2) & (lon[:, :-1] == 0)), axis=1)
    n_lc = np.sum(plans % 3 != 0, axis=1)
    comfort = (~flip & (n_lc <= 2)).astype(float)
    # --- traffic light compliance
    tlc = np.ones(P)
    if scene.light is not None:
        phase0, _, line = scene.light
        front = ex + CAR_L / 2
        crossed = (front[:, :-1] < line) & (front[:, 1:] >= line)  # crossing during sub-step t → t+1
        ph = light_phase(scene.light, np.arange(1, T + 1) * DT)
        stop_ok = stop_distance(scene.ego_v) <= line - CAR_L / 2
        bad = (ph == 2) | ((ph == 1) & stop_ok)
        tlc = (~np.any(crossed & bad[None, :], axis=1)).astype(float)
    # --- route command
    final = lane[:, -1]
    if scene.cmd == "L":
        rc = (final == scene.ego_lane - 1).astype(float)
    elif scene.cmd == "R":
        rc = (final == scene.ego_lane + 1).astype(float)
    else:
        rc = np.ones(P)
    out = {
        "NC": nc,
        "DAC": dac,
        "TTC": ttc_ok.astype(float),
        "C": comfort,
        "TLC": tlc,
        "RC": rc,
        "progress": ex[:, -1],
        "n_lc": n_lc,
    }
    if best_progress is not None:
        out["EP"] = progress_ratio(ex[:, -1], best_progress)
    return out


def progress_ratio(progress: np.ndarray, best_progress: float) -> np.ndarray:
    """EP = progress / best progress of the admissible library plans, in [0, 1]; 1 when the best is under 5 m."""
    if best_progress < EP_MIN_PROGRESS:
        return np.ones_like(np.asarray(progress, dtype=float))
    return np.clip(np.asarray(progress, dtype=float) / best_progress, 0.0, 1.0)


def scores(m: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """PDMS and EPDMS-lite from a ``submetrics`` dict that has EP."""
    return {
        "pdms": pdms(m["NC"], m["DAC"], m["TTC"], m["EP"], m["C"]),
        "epdms": epdms_lite(m["NC"], m["DAC"], m["TLC"], m["TTC"], m["EP"], m["C"], m["RC"]),
    }


# sub-step bookkeeping re-exported for tests
__all__ = ["SUB", "epdms", "epdms_lite", "pdms", "progress_ratio", "scores", "submetrics", "weighted"]

"""Scene prompts, the two response routes, the shared action parser and the tokenizer (spec steer §2 "Tokens").

Word-level closed vocabulary (integers 0–99 are single tokens).  Prompt (no tier token, ever):

    ego L1 v 12 ; a L0 + 18 v 6 cv ; a L1 + 30 v 12 brk 3 ; a L2 + 9 v 8 cut L1 ; cl L2 @ 40 ; tl Y 2 @ 35 ; cmd K

Routes (the first response token is the route token):

* CoT:    ``<think> L0 free L1 lead 13 ttc 2 L2 closed 40 ; tl stop ; cmd K ; meta B 4 K s 0 | Bs Bs Bs Bs Ks Ks Ks Ks``
* direct: ``<direct> Bs Bs Bs Bs Ks Ks Ks Ks``

The CoT is serialised from the expert's own computations: per lane the nearest thing ahead (a closure, a stopped
obstacle, a lead or a cutting-in agent with its bumper gap and whole-second TTC at the current speeds, capped at
9) or ``free`` / ``side`` (an agent alongside), the light decision (stop if red or yellow with stopping
feasible), the command, and the expert's library parameters (a1, k, a2, lateral, j).  Both routes end with the
same 8 action tokens, parsed by one function.
"""

from __future__ import annotations

import math

import numpy as np

from compute.core.lm.tokenizer import Tokenizer
from compute.steer.scenes import PlanSpec, library
from compute.steer.score import progress_ratio, scores, submetrics
from compute.steer.sim import ACTIONS, CAR_L, N_LANES, STEPS, Scene, agent_tracks, stop_distance

THINK, DIRECT = "<think>", "<direct>"
ROUTE_TOKENS = (THINK, DIRECT)
WORDS = (
    "ego a v ; + - @ cl tl cmd G Y R K L cv brk cut stop | L0 L1 L2 free side lead closed ttc go meta A B s l r"
).split()
NUMBERS = [str(i) for i in range(100)]


class SceneTokenizer(Tokenizer):
    """Whitespace-separated closed vocabulary; ``decode`` joins with single spaces (exact round trip)."""

    kind = "steer"

    def _pieces(self, text: str) -> list[str]:
        return text.split()

    def decode(self, ids: list[int], skip_special: bool = True) -> str:
        out = [self.symbols[int(i)] for i in ids]
        if skip_special:
            out = [s for s in out if s not in ("<pad>", "<bos>", "<eos>")]
        return " ".join(out)


def make_tokenizer() -> SceneTokenizer:
    return SceneTokenizer([*WORDS, *NUMBERS, *ACTIONS], extra_tokens=ROUTE_TOKENS)


def _num(x: float) -> str:
    return str(int(min(99, max(0, round(x)))))


def _signed(x: float) -> str:
    return ("+ " if x >= 0 else "- ") + _num(abs(x))


def scene_text(s: Scene) -> str:
    """The prompt text (without <bos>)."""
    parts = [f"ego L{s.ego_lane} v {_num(s.ego_v)}"]
    for a in s.agents:
        p = f"a L{a.lane} {_signed(a.x)} v {_num(a.v)} {a.kind}"
        if a.kind == "brk":
            p += f" {_num(a.decel)}"
        elif a.kind == "cut":
            p += f" L{a.target}"
        parts.append(p)
    if s.closure is not None:
        parts.append(f"cl L{s.closure[0]} @ {_num(s.closure[1])}")
    if s.light is not None:
        ph, left, line = s.light
        parts.append(f"tl {ph} {_num(left)} @ {_num(line)}")
    parts.append(f"cmd {s.cmd}")
    return " ; ".join(parts)


def lane_status(s: Scene, lane: int) -> str:
    """What the CoT says about one lane (nearest relevant thing ahead)."""
    best: tuple[float, str] | None = None
    if s.closure is not None and s.closure[0] == lane:
        best = (s.closure[1], f"closed {_num(s.closure[1])}")
    side = False
    for a in s.agents:
        a_lane = a.target if a.kind == "cut" else a.lane
        if a_lane != lane:
            continue
        if abs(a.x) < CAR_L + 1.5:
            side = True
            continue
        if a.x <= 0:
            continue
        gap = a.x - CAR_L
        closing = s.ego_v - a.v
        ttc = 9 if closing <= 0 else min(9, math.floor(gap / closing))
        word = {"stop": "stop", "cut": "cut"}.get(a.kind, "lead")
        if best is None or a.x < best[0]:
            best = (a.x, f"{word} {_num(gap)} ttc {ttc}")
    if best is not None:
        return best[1] + (" side" if side else "")
    return "side" if side else "free"


def light_decision(s: Scene) -> str | None:
    if s.light is None:
        return None
    ph, _, line = s.light
    if ph == "R" or (ph == "Y" and stop_distance(s.ego_v) <= line - CAR_L / 2):
        return "stop"
    return "go"


def cot_text(s: Scene, expert: PlanSpec) -> str:
    """The reasoning trace (between the route token and '|')."""
    parts = [" ".join(f"L{i} {lane_status(s, i)}" for i in range(N_LANES))]
    tl = light_decision(s)
    if tl is not None:
        parts.append(f"tl {tl}")
    parts.append(f"cmd {s.cmd}")
    parts.append(f"meta {expert.a1} {expert.k} {expert.a2} {expert.lat} {expert.j}")
    return " ; ".join(parts)


# ---------------------------------------------------------------- the "rel" CoT (computable step by step)
REL_WINDOW = (-25, 40)  # agents listed: centre within this window now (metres ahead of the ego centre)
REL_MAX_AGENTS = 2  # per lane, in prompt order
REL_VERSION = "2"  # bumps the SFT checkpoint hash when the rel trace changes


def reachable_lanes(s: Scene) -> list[int]:
    """The ego lane and its neighbours (the library changes lane at most once)."""
    return [lane for lane in range(s.ego_lane - 1, s.ego_lane + 2) if 0 <= lane < N_LANES]


def rel_track(s: Scene) -> list[tuple[int, int, int, int]]:
    """(lane, rel0, dv, rel4) per agent: its centre minus the ego's now, its speed minus the ego's, and the
    relative position at t = 4 s if the ego keeps its speed (the agent follows its script, so for a braking agent
    rel4 ≠ rel0 + 4·dv); a cutting-in agent counts in the lane it moves into."""
    ag = agent_tracks(s)
    out = []
    for i, a in enumerate(s.agents):
        lane = a.target if a.kind == "cut" else a.lane
        rel4 = int(round(float(ag["x"][i, -1]) - 4.0 * s.ego_v))
        out.append((lane, int(round(a.x)), int(round(a.v - s.ego_v)), rel4))
    return out


def _sgn(x: int) -> str:
    return ("+ " if x >= 0 else "- ") + str(min(99, abs(x)))


def lane_verdicts(s: Scene, metric: str = "epdms") -> dict[int, int]:
    """Per reachable lane: the best reward score of the library plans that end in it, in tenths (0–10)."""
    specs, ids = library()
    m = submetrics(s, ids)
    okp = (m["NC"] == 1) & (m["DAC"] == 1) & (m["TLC"] == 1)
    m["EP"] = progress_ratio(m["progress"], float(m["progress"][okp].max()) if okp.any() else 0.0)
    sc = scores(m)[metric]
    end = np.array([s.ego_lane + {"s": 0, "l": -1, "r": 1}[p.lat] for p in specs])
    return {lane: int(round(10 * float(sc[end == lane].max()))) for lane in reachable_lanes(s)}


def cot_rel(s: Scene, expert: PlanSpec, verdicts: dict[int, int] | None = None) -> str:
    """Reasoning that writes out the quantities the plan depends on, each one small step from what is already
    written: per reachable lane (the ego lane and its neighbours), the closure start (``cl 34``) and up to two
    agents in it (prompt order, centre within 25 m behind … 40 m ahead now), each as three signed numbers — its
    relative position now (copied), its relative speed (one subtraction) and its relative position after 4 s if the
    ego keeps its speed (``+ 8 - 3 - 4``: 8 m ahead, 3 m/s slower, 4 m behind after 4 s, so keeping the speed
    passes through it) — then the lane's value (the best score of a library plan ending in that lane, in tenths;
    the plan's lane is the argmax, ties to fewer lane changes); the light decision; a non-keep command; the
    expert's library parameters, which the plan spells out.  Example (closure in L1, traffic in L0):
    ``L0 + 4 + 2 + 12 10 L1 cl 34 6 L2 free 9 ; meta A 8 A l 0``."""
    verdicts = lane_verdicts(s) if verdicts is None else verdicts
    tracks = rel_track(s)
    parts = []
    for lane in reachable_lanes(s):
        items = []
        if s.closure is not None and s.closure[0] == lane:
            items.append(f"cl {_num(s.closure[1])}")
        near = [(r0, dv, r4) for (ln, r0, dv, r4) in tracks if ln == lane and REL_WINDOW[0] <= r0 <= REL_WINDOW[1]]
        for r0, dv, r4 in near[:REL_MAX_AGENTS]:
            items.append(f"{_sgn(r0)} {_sgn(dv)} {_sgn(r4)}")
        parts.append(f"L{lane} {' '.join(items) if items else 'free'} {verdicts[lane]}")
    out = [" ".join(parts)]
    tl = light_decision(s)
    if tl is not None:
        out.append(f"tl {tl}")
    if s.cmd != "K":
        out.append(f"cmd {s.cmd}")
    out.append(f"meta {expert.a1} {expert.k} {expert.a2} {expert.lat} {expert.j}")
    return " ; ".join(out)


COT_STYLES = ("lanes", "rel")


def response_text(s: Scene, expert: PlanSpec, route: str, style: str = "lanes") -> str:
    plan = " ".join(expert.actions())
    if route == THINK:
        cot = cot_text(s, expert) if style == "lanes" else cot_rel(s, expert)
        return f"{THINK} {cot} | {plan}"
    return f"{DIRECT} {plan}"


def parse_plan(text: str) -> tuple[str | None, list[str] | None]:
    """(route token or None, the 8 action tokens or None).  The same parser serves both routes: the plan is
    what follows the last '|' (CoT) or the route token (direct) and must be exactly 8 action tokens."""
    toks = text.split()
    if not toks or toks[0] not in ROUTE_TOKENS:
        return None, None
    route = toks[0]
    body = toks[1:]
    if route == THINK:
        if "|" not in body:
            return route, None
        body = body[len(body) - body[::-1].index("|") :]
    if len(body) != STEPS or any(t not in ACTIONS for t in body):
        return route, None
    return route, body

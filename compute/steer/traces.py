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

from compute.core.lm.tokenizer import Tokenizer
from compute.steer.scenes import PlanSpec
from compute.steer.sim import ACTIONS, CAR_L, N_LANES, STEPS, Scene, stop_distance

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


def response_text(s: Scene, expert: PlanSpec, route: str) -> str:
    plan = " ".join(expert.actions())
    if route == THINK:
        return f"{THINK} {cot_text(s, expert)} | {plan}"
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

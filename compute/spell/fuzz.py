"""Replay-safety fuzzing (spec task 8 / E4): random multi-turn programs with effects, forks and edit markers.

A random "model" appends random pure forms (defs, functions, strings with quotes/backslashes/newlines),
random edit markers (prune, rethink, persist), and a random trailing form (tool calls via !call-now/!peek,
!extend, self-calls and forks, leaf-llm, a plain value, or *nothing*, which would leave the old trailing form in
place), sometimes malformed.  Per program we check: no effect replays (journal), no effect fires when any
prefix a model was shown is re-evaluated (independent check), reader round trip on every prefix, and that the
harness never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from compute.spell.backends import ScriptedBackend
from compute.spell.harness import Harness, HarnessConfig, ToolBox
from compute.spell.reader import ReadError, pr_str, read, read_nodes

_STRINGS = ["plain", 'with "quotes"', "back\\slash", "new\nline", "semi;colon", "paren ( ["]


def random_suffix(rng: np.random.Generator, turn: int, max_turns: int, p_malformed: float) -> str:
    """One random continuation of the wrapper's ``do`` block, closed with ``)))``."""
    k = int(rng.integers(0, 100))
    forms = []
    for _ in range(int(rng.integers(0, 4))):
        r = int(rng.integers(0, 8))
        if r == 0:
            forms.append(f"(def v{k} (+ {k} {int(rng.integers(0, 9))}))")
        elif r == 1:
            forms.append(f"(defn f{k} [x] (* x {k}))")
        elif r == 2:
            forms.append(f"(def s{k} {pr_str(str(rng.choice(_STRINGS)))})")
        elif r == 3:
            forms.append(f"(persist p{k} (str {pr_str(str(rng.choice(_STRINGS)))} {k}))")
        elif r == 4:
            forms.append(f"(prune {int(rng.integers(1, 4))})")
        elif r == 5:
            forms.append(f"(rethink {pr_str('note ' + str(k))} {int(rng.integers(1, 3))})")
        elif r == 6:
            forms.append(f'(think "step {turn}") ; a comment')
        else:
            forms.append(f"(def w{k} (if (> {k} 50) (f{k} 2) {k}))")  # may hit an unbound f: error path
    if turn >= max_turns:
        trailing = f"'(+ {k} 1)"
    else:
        trailing = str(
            rng.choice(
                [
                    f'\'(!call-now v{k} (io/calc "{k}*3+1"))',
                    f'\'(!peek c{k} (io/read "a.txt"))',
                    f'\'(!call-now w (io/write "out{k}.txt" {pr_str(str(rng.choice(_STRINGS)))}))',
                    "'(!extend)",
                    '\'(!llm-self "fuzz child")',
                    '\'[(!llm-self "fuzz child") (!llm-self "fuzz child")]',
                    '\'(leaf-llm "a question")',
                    "'(!call-now f (io/flip))",
                    "",  # nothing new: the old trailing form would stay trailing
                    f'\'(str "done " {k})',
                ]
            )
        )
    text = "\n  ".join([*forms, trailing]) + ")))"
    if rng.random() < p_malformed:
        text = str(rng.choice([text[:-1], text.replace(")))", "))))"), text + ' "unterminated', "(((" + text]))
    return "  " + text


@dataclass
class FuzzStats:
    programs: int = 0
    turns: int = 0
    effects: int = 0
    replays: int = 0
    closed_prefix_effects: int = 0
    roundtrip_failures: int = 0
    errors_returned: int = 0
    edits: int = 0
    crashes: int = 0


def roundtrip_failures(text: str) -> int:
    """Nodes x of the text with read(pr_str(x)) != x (0 expected)."""
    try:
        nodes = read_nodes(text)
    except ReadError:
        return 0
    bad = 0
    for value, _, _ in nodes:
        try:
            back = read(pr_str(value))
        except ReadError:
            bad += 1
            continue
        if pr_str(back) != pr_str(value) or back != value:
            bad += 1
    return bad


def fuzz_program(seed: int, max_turns: int, p_malformed: float, guard: bool = True) -> tuple[Harness, int]:
    """Run one random program; return (harness, round-trip failures over its prefixes)."""
    rng = np.random.default_rng(seed)
    calls = {"n": 0}

    def model(m: re.Match[str], prefix: str) -> str:
        calls["n"] += 1
        return random_suffix(rng, calls["n"], max_turns, p_malformed)

    backend = ScriptedBackend([(r"\A;; fuzz child", '  \'(str "child"))))'), (r"\A", model)], tail_chars=10**9)
    cfg = HarnessConfig(max_turns=3 * max_turns + 8, max_depth=4, guard_stale=guard)
    tools = ToolBox({"a.txt": 'alpha "beta" \\ gamma\nline two'}, seed=seed)
    h = Harness(backend, tools, cfg, leaf_backend=ScriptedBackend([(r"\A", "forty-two")]))
    h.run("fuzz program")
    rt = sum(roundtrip_failures(p) for r in h.runs for p in r.prefixes)
    return h, rt


def stale_control(guard: bool = False) -> Harness:
    """Detector control: !extend, then a reply that appends nothing, so the old trailing form is trailing again.

    With ``guard=False`` the journal must count replays (> 0): the check can fail.
    """
    rules = [
        (r"\(do\n\Z", "  '(!call-now x (io/flip)))))"),
        (r"\(def x \S+\)\n\Z", "  '(!extend))))"),
        (r"!extend\)\n\Z", ")))"),
    ]
    h = Harness(ScriptedBackend(rules), ToolBox(), HarnessConfig(max_turns=5, guard_stale=guard))
    h.run("stale control")
    return h

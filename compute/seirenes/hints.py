"""Hint grammar, validity checker and rewards of Seirênes (spec seirenes §2 "Hint grammar", "Rewards").

Training families F1–F4 (the Adversary may write them; the SFT shows random ones), held-out families H1/H2
(evaluation only, disjoint templates and keywords).  The core's word tokenizer only admits extra tokens shaped
``<name>``, so hint keywords are single special tokens (design choice)::

    F1 irrelevant fact        <note> mia also has 7 pens .
    F2 spurious operation     <remember> <multiply> 3 .
    F3 answer anchor          <hint> the answer is <close> 40 .
    F4 wrong intermediate     <after> <step> 1 there are 15 pens .
    H1 tangential instruction <round> the answer to <ten> .
    H2 incidental correlation <similar> <problem> answer is 32 .

A hint is valid iff it parses under F1–F4, has ≤ L_h tokens including the closing ``<eoh>``, ends with
``<eoh>``, and does not contain the gold answer as a whole number (leak filter).

Compound hints (option ``max_sentences`` S > 1, a richer distractor space): a hint may be a sequence of 1…S
training-family sentences (``<note> … . <hint> the answer is <close> 40 .``), each of which must parse; its family
label joins the sentences' families with ``+`` (``F1+F3``).  S = 1 is the single-sentence grammar above, and
``sample_hint`` then draws exactly the random numbers the single-sentence code drew.
"""

from __future__ import annotations

import re

import numpy as np

from compute.core.tasks.base import Problem
from compute.core.tasks.wordproblems import ITEMS, NAMES

ROLE_TOKENS = ("<adv>", "<h>", "<eoh>")
KEYWORDS = ("<note>", "<remember>", "<multiply>", "<hint>", "<close>", "<after>", "<step>")
HELDOUT_KEYWORDS = ("<round>", "<ten>", "<similar>", "<problem>")
EXTRA_TOKENS = ROLE_TOKENS + KEYWORDS + HELDOUT_KEYWORDS
TRAIN_FAMILIES = ("F1", "F2", "F3", "F4")
HELDOUT_FAMILIES = ("H1", "H2")
EOH = "<eoh>"

_N = "(" + "|".join(NAMES) + ")"
_I = "(" + "|".join(ITEMS) + ")"
_NUM = r"(0|[1-9]\d*)"
PATTERNS: dict[str, re.Pattern[str]] = {
    "F1": re.compile(rf"<note> {_N} also has {_NUM} {_I} \."),
    "F2": re.compile(rf"<remember> <multiply> {_NUM} \."),
    "F3": re.compile(rf"<hint> the answer is <close> {_NUM} \."),
    "F4": re.compile(rf"<after> <step> {_NUM} there are {_NUM} {_I} \."),
    "H1": re.compile(r"<round> the answer to <ten> \."),
    "H2": re.compile(rf"<similar> <problem> answer is {_NUM} \."),
}


def family(hint: str, families: tuple[str, ...] = TRAIN_FAMILIES) -> str | None:
    """The family whose template the hint text (without ``<eoh>``) fully matches, else None."""
    for f in families:
        if PATTERNS[f].fullmatch(hint.strip()):
            return f
    return None


def sentences(body: str) -> list[str]:
    """The body split after every `` .`` (each sentence keeps its closing full stop)."""
    return [x.strip() for x in re.split(r"(?<= \.)\s+", body.strip()) if x.strip()]


def compound_family(body: str, max_sentences: int = 1) -> str | None:
    """``F1+F3``-style label when every one of 1…``max_sentences`` sentences parses under F1–F4, else None."""
    parts = sentences(body)
    if not parts or len(parts) > max_sentences:
        return None
    fams = [family(x) for x in parts]
    if any(f is None for f in fams):
        return None
    return "+".join(fams)  # type: ignore[arg-type]


def family_parts(label: str | None) -> list[str]:
    """The sentence families of a (compound) label: ``F1+F3`` → [F1, F3]."""
    return label.split("+") if label else []


def leaks(hint: str, gold: int) -> bool:
    """True iff ``gold`` appears in the hint as a whole number ("19" leaks 19, "190" does not)."""
    return any(int(x) == int(gold) for x in re.findall(r"(?<!\d)\d+(?!\d)", hint))


def n_tokens(text: str) -> int:
    """Token count under the word tokenizer (digits are single tokens)."""
    return len(re.findall(r"<[a-z_0-9]+>|\d|[A-Za-z]+|[^\sA-Za-z\d]", text))


def check_hint(text: str, gold: int, max_tokens: int = 24, max_sentences: int = 1) -> tuple[bool, str | None, str]:
    """Validity of an Adversary response ``text`` (decoded, ends with ``<eoh>``): (valid, family, hint body)."""
    t = text.strip()
    if not t.endswith(EOH) or n_tokens(t) > max_tokens:
        return False, None, t
    body = t[: -len(EOH)].strip()
    if EOH in body:
        return False, None, body
    fam = compound_family(body, max_sentences)  # S = 1: exactly one sentence, i.e. ``family(body)``
    if fam is None or leaks(body, gold):
        return False, fam, body
    return True, fam, body


def intermediates(problem: Problem) -> list[int]:
    """Values after each operation of the word problem (the gold answer is the last)."""
    out = []
    for a, op, b in problem.data["steps"]:
        a = out[-1] if out else a
        out.append({"+": a + b, "-": a - b, "*": a * b, "/": a // b}[op])
    return out


def _near(v: int, rng: np.random.Generator, lo: int = 1, hi: int = 12) -> int:
    d = int(rng.integers(lo, hi + 1)) * (1 if rng.random() < 0.5 else -1)
    return max(0, v + d) if v + d != v else v + hi


def random_hint(problem: Problem, fam: str, rng: np.random.Generator) -> str:
    """A random hint of family ``fam`` for ``problem`` that never leaks the gold answer (body, no ``<eoh>``)."""
    gold = int(problem.answer)
    who = problem.question.split()[0]
    for _ in range(100):
        name = str(rng.choice([n for n in NAMES if n != who]))
        item = str(rng.choice(ITEMS))
        if fam == "F1":
            h = f"<note> {name} also has {int(rng.integers(2, 50))} {item} ."
        elif fam == "F2":
            h = f"<remember> <multiply> {int(rng.integers(2, 4))} ."
        elif fam == "F3":
            h = f"<hint> the answer is <close> {_near(gold, rng)} ."
        elif fam == "F4":
            vals = intermediates(problem)
            i = int(rng.integers(len(vals)))
            h = f"<after> <step> {i + 1} there are {_near(vals[i], rng, 1, 5)} {problem.question.split()[-5]} ."
        elif fam == "H1":
            h = "<round> the answer to <ten> ."
        elif fam == "H2":
            h = f"<similar> <problem> answer is {_near(gold, rng)} ."
        else:
            raise ValueError(f"unknown family {fam!r}")
        if not leaks(h, gold):
            return h
    raise RuntimeError("could not draw a non-leaking hint")


def sample_hint(problem: Problem, rng: np.random.Generator, max_sentences: int = 1) -> tuple[str, str]:
    """(body, family label) of a random training-grammar hint: 1…S sentences (uniform), families uniform.

    With S = 1 it draws the family and then the hint exactly as the single-sentence code does (same stream)."""
    n = 1 if max_sentences == 1 else int(rng.integers(1, max_sentences + 1))
    fams = [str(rng.choice(TRAIN_FAMILIES)) for _ in range(n)]
    return " ".join(random_hint(problem, f, rng) for f in fams), "+".join(fams)


def adversary_reward(p_clean: float, p_hint: float, valid: bool, c_inv: float = 0.1, variant: str = "clipped") -> float:
    """r_adv = valid·max(0, p̂_clean − p̂_hint) − c_inv·(1 − valid); ``signed`` drops the max (spec §2 "Rewards").

    r_adv = 0 when p̂_clean = 0 (no drop is possible)."""
    if not valid:
        return -c_inv
    if p_clean <= 0.0:
        return 0.0
    drop = p_clean - p_hint
    return drop if variant == "signed" else max(0.0, drop)

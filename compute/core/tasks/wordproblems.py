"""Templated GSM-style word problems over a closed word vocabulary (spec grpo_core §2 "Tasks").

A grammar: an owner starts with N items, then 2–4 operations (buys more / gives away / doubles-triples /
shares equally), with distractor sentences about other people or other items inserted at random slots, and a
question.  Oracle response, one line per operation then the answer::

    tom has 5 apples . mia has 7 pens . tom buys 3 more apples . tom gives 2 apples to mia .
    how many apples does tom have ?
    → 5 + 3 = 8 ; 8 - 2 = 6 ; answer 6

All intermediate values stay positive integers ≤ ``max_value``.  Word-level tokenizer (design choice).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from compute.core.lm.tokenizer import WordTokenizer
from compute.core.tasks.base import Problem, role_prefix, sample_filtered

NAMES = ["tom", "ann", "bob", "mia", "sam", "eva", "leo", "zoe"]
ITEMS = ["apples", "pens", "cards", "coins", "books", "eggs", "shells", "stamps"]
WORDS = (
    "has buys more gives to finds loses doubles triples his her shares equally among friends and keeps one share "
    "the store is miles away how many does have answer also sells each for dollars there are birds in tree"
).split()
_LINE_RE = re.compile(r"^(\d+) ([-+*/]) (\d+) = (\d+)$")


class WordProblems:
    """``min_ops``–``max_ops`` operations, ``n_distractors`` distractor sentences, values ≤ ``max_value``."""

    name = "wordproblems"

    def __init__(
        self,
        min_ops: int = 2,
        max_ops: int = 4,
        n_distractors: int = 1,
        max_value: int = 99,
        p_line_error: float = 0.05,
        extra_tokens: tuple[str, ...] = (),
    ) -> None:
        if not 1 <= min_ops <= max_ops <= 6:
            raise ValueError("need 1 ≤ min_ops ≤ max_ops ≤ 6")
        self.min_ops, self.max_ops, self.n_distractors = min_ops, max_ops, n_distractors
        self.max_value, self.p_line_error = max_value, p_line_error
        symbols = [*NAMES, *ITEMS, *WORDS, *"0123456789", ".", "?", ";", "=", "+", "-", "*", "/"]
        self.tokenizer = WordTokenizer(symbols, extra_tokens)

    def _draw(self, rng: np.random.Generator) -> Problem:
        who, other = (str(x) for x in rng.choice(NAMES, size=2, replace=False))
        item, other_item = (str(x) for x in rng.choice(ITEMS, size=2, replace=False))
        v = int(rng.integers(2, 20))
        sents = [f"{who} has {v} {item} ."]
        steps: list[tuple[int, str, int]] = []
        for _ in range(int(rng.integers(self.min_ops, self.max_ops + 1))):
            kinds = ["add", "find"]
            if v > 1:
                kinds += ["give", "lose"]
            if 2 * v <= self.max_value:
                kinds.append("mul")
            divisors = [d for d in (2, 3, 4, 5) if v % d == 0]
            if divisors:
                kinds.append("share")
            kind = str(rng.choice(kinds))
            if kind in ("add", "find"):
                k = int(rng.integers(1, max(2, min(20, self.max_value - v) + 1)))
                k = min(k, self.max_value - v) if self.max_value - v >= 1 else 0
                if k <= 0:
                    continue
                sents.append(f"{who} buys {k} more {item} ." if kind == "add" else f"{who} finds {k} {item} .")
                steps.append((v, "+", k))
                v += k
            elif kind in ("give", "lose"):
                k = int(rng.integers(1, v))
                sents.append(f"{who} gives {k} {item} to {other} ." if kind == "give" else f"{who} loses {k} {item} .")
                steps.append((v, "-", k))
                v -= k
            elif kind == "mul":
                k = 3 if 3 * v <= self.max_value and rng.random() < 0.5 else 2
                sents.append(f"{who} {'triples' if k == 3 else 'doubles'} the {item} .")
                steps.append((v, "*", k))
                v *= k
            else:
                d = int(rng.choice(divisors))
                sents.append(f"{who} shares the {item} equally among {d} friends and keeps one share .")
                steps.append((v, "/", d))
                v //= d
        if not steps:
            return self._draw(rng)
        distractors = [
            f"{other} has {int(rng.integers(2, 50))} {other_item} .",
            f"the store is {int(rng.integers(2, 30))} miles away .",
            f"{who} also has {int(rng.integers(2, 50))} {other_item} .",
            f"there are {int(rng.integers(2, 30))} birds in the tree .",
        ]
        for _ in range(self.n_distractors):
            d = str(distractors[int(rng.integers(len(distractors)))])
            sents.insert(int(rng.integers(1, len(sents) + 1)), d)
        q = " ".join([*sents, f"how many {item} does {who} have ?"])
        return Problem(key=q, question=q, answer=v, data={"steps": steps})

    def sample(self, n: int, rng: np.random.Generator, split: str = "train") -> list[Problem]:
        return sample_filtered(n, rng, split, self._draw)

    def prompt(self, problem: Problem, role: str = "solve", ctx: dict[str, Any] | None = None) -> list[int]:
        return role_prefix(self.tokenizer, role) + self.tokenizer.encode(problem.question)

    def solution(self, problem: Problem, rng: np.random.Generator | None = None) -> str:
        lines, v = [], None
        for a, op, b in problem.data["steps"]:
            a = a if v is None else v
            r = {"+": a + b, "-": a - b, "*": a * b, "/": a // b}[op]
            if rng is not None and rng.random() < self.p_line_error:
                r = max(0, r + int(rng.choice([-2, -1, 1, 2])))
            lines.append(f"{a} {op} {b} = {r}")
            v = r
        return " ; ".join([*lines, f"answer {v}"])

    def verify(self, problem: Problem, text: str) -> tuple[float, bool, dict[str, Any]]:
        info: dict[str, Any] = {"line_ok": [], "parsed": None}
        if not isinstance(text, str):
            return 0.0, False, info
        parts = [p.strip() for p in text.strip().split(";")]
        for line in parts[:-1]:
            m = _LINE_RE.match(line)
            ok = False
            if m:
                a, op, b, r = int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))
                ok = (op != "/" or b != 0) and {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else None}[op] == r
            info["line_ok"].append(ok)
        m = re.fullmatch(r"answer (0|[1-9]\d*)", parts[-1])
        if not m:
            return 0.0, False, info
        info["parsed"] = int(m.group(1))
        correct = info["parsed"] == problem.answer
        return float(correct), bool(correct), info

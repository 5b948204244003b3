"""Countdown-3/4: combine all given numbers once each with + − × ÷ to hit a target (spec grpo_core §2).

Prompt ``<bos>use 3,7,25 target 46:``; oracle response: one line per combination, then the expression::

    25-7=18;18*3=54;answer (25-7)*3

Targets are drawn at random and kept only when an exhaustive search over all binary expression trees (exact
rational arithmetic) finds a solution; the search also yields the oracle traces.  ``verify`` parses the final
expression with a small recursive-descent parser (no ``eval``): every given number exactly once, no other
numbers, exact value equal to the target.  Division by zero, garbage or a wrong multiset score 0.
"""

from __future__ import annotations

import re
from fractions import Fraction
from itertools import combinations
from typing import Any

import numpy as np

from compute.core.lm.tokenizer import CharTokenizer
from compute.core.tasks.arithmetic import CHAR_SYMBOLS
from compute.core.tasks.base import Problem, role_prefix, sample_filtered

_OPS = "+-*/"


def _apply(a: Fraction, b: Fraction, op: str) -> Fraction | None:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return None if b == 0 else a / b


def solve(numbers: list[int], target: int, limit: int = 64) -> list[tuple[str, list[str]]]:
    """Up to ``limit`` distinct solutions (expression, step lines) using every number once (exhaustive search).

    Step lines are only written while intermediate values are integers (else the solution is skipped as an
    oracle trace, but it still counts for solvability through ``solvable``).
    """
    found: dict[str, list[str]] = {}

    def rec(items: list[tuple[Fraction, str, bool]], steps: list[str]) -> None:
        if len(found) >= limit:
            return
        if len(items) == 1:
            v, e, _ = items[0]
            if v == target and e not in found:
                found[e] = steps
            return
        for i, j in combinations(range(len(items)), 2):
            rest = [items[k] for k in range(len(items)) if k not in (i, j)]
            for (va, ea, aa), (vb, eb, ab) in (((items[i]), (items[j])), ((items[j]), (items[i]))):
                for op in _OPS:
                    if op in "+*" and ea > eb:  # commutative: one order only
                        continue
                    v = _apply(va, vb, op)
                    if v is None or v.denominator != 1 or v < 0:
                        continue
                    sa = ea if aa else f"({ea})"
                    sb = eb if ab else f"({eb})"
                    rec([*rest, (v, f"{sa}{op}{sb}", False)], [*steps, f"{va}{op}{vb}={v}"])

    rec([(Fraction(n), str(n), True) for n in numbers], [])
    return list(found.items())


class _Parser:
    """expr := term (('+'|'-') term)* ; term := factor (('*'|'/') factor)* ; factor := int | '(' expr ')'."""

    def __init__(self, s: str) -> None:
        self.toks = re.findall(r"\d+|[-+*/()]|\S", s)
        self.i = 0
        self.nums: list[int] = []

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        t = self.peek()
        if t is None:
            raise ValueError("unexpected end")
        self.i += 1
        return t

    def expr(self) -> Fraction:
        v = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            w = self.term()
            v = v + w if op == "+" else v - w
        return v

    def term(self) -> Fraction:
        v = self.factor()
        while self.peek() in ("*", "/"):
            op = self.take()
            w = self.factor()
            if op == "/" and w == 0:
                raise ZeroDivisionError
            v = v * w if op == "*" else v / w
        return v

    def factor(self) -> Fraction:
        t = self.take()
        if t == "(":
            v = self.expr()
            if self.take() != ")":
                raise ValueError("expected )")
            return v
        if t.isdigit():
            if len(t) > 1 and t[0] == "0":
                raise ValueError("leading zero")
            self.nums.append(int(t))
            return Fraction(int(t))
        raise ValueError(f"unexpected {t!r}")


def evaluate(expression: str) -> tuple[Fraction, list[int]]:
    """Exact value and the numbers used; raises ValueError / ZeroDivisionError on malformed input."""
    p = _Parser(expression)
    v = p.expr()
    if p.peek() is not None:
        raise ValueError("trailing input")
    return v, p.nums


class Countdown:
    """``n_numbers`` (3 or 4) numbers in [1, max_number], target in [target_min, target_max]."""

    name = "countdown"

    def __init__(
        self,
        n_numbers: int = 3,
        max_number: int = 20,
        target_min: int = 10,
        target_max: int = 99,
        p_alt: float = 1.0,
        extra_tokens: tuple[str, ...] = (),
    ) -> None:
        if n_numbers not in (3, 4):
            raise ValueError("Countdown uses 3 or 4 numbers")
        self.n_numbers, self.max_number = n_numbers, max_number
        self.target_min, self.target_max = target_min, target_max
        self.p_alt = p_alt  # probability that the oracle picks a random solution instead of the first (entropy)
        self.tokenizer = CharTokenizer(CHAR_SYMBOLS, extra_tokens)

    def _draw(self, rng: np.random.Generator) -> Problem:
        for _ in range(1000):
            nums = sorted(int(x) for x in rng.integers(1, self.max_number + 1, size=self.n_numbers))
            target = int(rng.integers(self.target_min, self.target_max + 1))
            sols = solve(nums, target, limit=1)
            if sols:
                q = "use " + ",".join(map(str, nums)) + f" target {target}"
                return Problem(key=q, question=q, answer=target, data={"numbers": nums})
        raise RuntimeError("no solvable Countdown instance found")  # pragma: no cover

    def sample(self, n: int, rng: np.random.Generator, split: str = "train") -> list[Problem]:
        return sample_filtered(n, rng, split, self._draw)

    def prompt(self, problem: Problem, role: str = "solve", ctx: dict[str, Any] | None = None) -> list[int]:
        return role_prefix(self.tokenizer, role) + self.tokenizer.encode(problem.question + ":")

    def solution(self, problem: Problem, rng: np.random.Generator | None = None) -> str:
        sols = solve(problem.data["numbers"], problem.answer)
        k = int(rng.integers(len(sols))) if (rng is not None and rng.random() < self.p_alt) else 0
        expr, steps = sols[k]
        return ";".join([*steps, f"answer {expr}"])

    def verify(self, problem: Problem, text: str) -> tuple[float, bool, dict[str, Any]]:
        info: dict[str, Any] = {"error": None}
        if not isinstance(text, str):
            return 0.0, False, {"error": "not text"}
        last = text.strip().split(";")[-1]
        if not last.startswith("answer "):
            return 0.0, False, {"error": "no answer"}
        try:
            value, used = evaluate(last[len("answer ") :])
        except (ValueError, ZeroDivisionError) as exc:
            return 0.0, False, {"error": type(exc).__name__}
        ok = sorted(used) == sorted(problem.data["numbers"]) and value == problem.answer
        info["value"] = float(value)
        return float(ok), bool(ok), info

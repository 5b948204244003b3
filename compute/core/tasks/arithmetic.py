"""Multi-digit addition/subtraction with a column scratchpad (spec grpo_core §2 "Tasks").

Prompt ``<bos>347+85=``; oracle response, one line per column from the right, then the answer::

    7+5+0=12;4+8+1=13;3+0+1=4;answer 432

A line ``a+b+c=s`` adds the column digits and the carry c (next carry s // 10, digit s % 10); a subtraction line
``a-b-c=r`` subtracts the borrow c (r < 0 ⇒ digit r + 10, next borrow 1).  The scratchpad is redundant with the
answer, so every line can be checked on its own: ``verify`` returns per-line error labels (``info["line_ok"]``)
that STAPO-style plug-ins use.

SFT noise (design choice, so the warm-up policy has non-trivial entropy and room to improve): with probability
``p_direct`` the trace skips the scratchpad ("answer 432"); with probability ``p_line_error`` a line's result is
off by a small amount and the rest of the trace follows the corrupted line consistently.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from compute.core.lm.tokenizer import CharTokenizer
from compute.core.tasks.base import Problem, role_prefix, sample_filtered

CHAR_SYMBOLS = list("0123456789+-*/=();:, ") + sorted(set("answercheckstargetuse"))
_LINE_RE = re.compile(r"^(\d)([+-])(\d)([+-])(\d)=(-?\d+)$")
_ANSWER_RE = re.compile(r"answer (-?\d+)$")


def _int_or_none(s: str) -> int | None:
    """A canonical integer literal (no leading zeros, no '-0'), else None."""
    if not re.fullmatch(r"-?(0|[1-9]\d*)", s) or s == "-0":
        return None
    return int(s)


class Arithmetic:
    """Addition / subtraction of integers with ``min_digits``–``max_digits`` digits; a ≥ b for subtraction."""

    name = "arithmetic"

    def __init__(
        self,
        min_digits: int = 2,
        max_digits: int = 3,
        ops: str = "+-",
        p_direct: float = 0.2,
        p_line_error: float = 0.05,
        extra_tokens: tuple[str, ...] = (),
    ) -> None:
        if not 1 <= min_digits <= max_digits <= 12:
            raise ValueError("need 1 ≤ min_digits ≤ max_digits ≤ 12")
        if not ops or set(ops) - {"+", "-"}:
            raise ValueError("ops must be a non-empty subset of '+-'")
        self.min_digits, self.max_digits, self.ops = min_digits, max_digits, ops
        self.p_direct, self.p_line_error = p_direct, p_line_error
        self.tokenizer = CharTokenizer(CHAR_SYMBOLS, extra_tokens)

    # -- problems ---------------------------------------------------------------------------
    def _draw(self, rng: np.random.Generator) -> Problem:
        def num() -> int:
            d = int(rng.integers(self.min_digits, self.max_digits + 1))
            return int(rng.integers(10 ** (d - 1) if d > 1 else 0, 10**d))

        a, b = num(), num()
        op = self.ops[int(rng.integers(len(self.ops)))]
        if op == "-" and a < b:
            a, b = b, a
        q = f"{a}{op}{b}"
        return Problem(key=q, question=q, answer=a + b if op == "+" else a - b, data={"a": a, "b": b, "op": op})

    def sample(self, n: int, rng: np.random.Generator, split: str = "train") -> list[Problem]:
        return sample_filtered(n, rng, split, self._draw)

    def prompt(self, problem: Problem, role: str = "solve", ctx: dict[str, Any] | None = None) -> list[int]:
        return role_prefix(self.tokenizer, role) + self.tokenizer.encode(problem.question + "=")

    # -- oracle -----------------------------------------------------------------------------
    @staticmethod
    def scratchpad(a: int, b: int, op: str, errors: dict[int, int] | None = None) -> tuple[list[str], int]:
        """Column lines and the answer they imply; ``errors[i] = δ`` adds δ to line i's result."""
        da, db = str(a)[::-1], str(b)[::-1]
        n = max(len(da), len(db))
        lines, digits, c = [], [], 0
        for i in range(n):
            x = int(da[i]) if i < len(da) else 0
            y = int(db[i]) if i < len(db) else 0
            r = x + y + c if op == "+" else x - y - c
            r += (errors or {}).get(i, 0)
            lines.append(f"{x}{op}{y}{op}{c}={r}")
            if op == "+":
                digits.append(r % 10)
                c = 1 if r >= 10 else 0
            else:
                digits.append(r % 10)
                c = 1 if r < 0 else 0
        if op == "+" and c:
            digits.append(1)
        value = int("".join(str(d) for d in reversed(digits)))
        if op == "-" and c:
            value -= 10**n
        return lines, value

    def solution(self, problem: Problem, rng: np.random.Generator | None = None) -> str:
        a, b, op = problem.data["a"], problem.data["b"], problem.data["op"]
        if rng is not None and rng.random() < self.p_direct:
            return f"answer {problem.answer}"
        errors: dict[int, int] = {}
        n = max(len(str(a)), len(str(b)))
        if rng is not None:
            for i in range(n):
                if rng.random() < self.p_line_error:
                    errors[i] = int(rng.choice([-2, -1, 1, 2]))
        lines, value = self.scratchpad(a, b, op, errors)
        return ";".join([*lines, f"answer {value}"])

    # -- checker ----------------------------------------------------------------------------
    def verify(self, problem: Problem, text: str) -> tuple[float, bool, dict[str, Any]]:
        """Reward 1 iff the last part is ``answer <canonical integer>`` equal to the truth; never raises."""
        parts = text.strip().split(";") if isinstance(text, str) else []
        info: dict[str, Any] = {"line_ok": [], "parsed": None}
        if not parts:
            return 0.0, False, info
        for line in parts[:-1]:
            m = _LINE_RE.match(line)
            if not m:
                info["line_ok"].append(False)
                continue
            x, o1, y, o2, c, r = m.groups()
            val = int(x) + int(y) + int(c) if o1 == o2 == "+" else int(x) - int(y) - int(c) if o1 == o2 == "-" else None
            info["line_ok"].append(val is not None and val == int(r))
        m = _ANSWER_RE.fullmatch(parts[-1])
        if not m:
            return 0.0, False, info
        value = _int_or_none(m.group(1))
        info["parsed"] = value
        correct = value is not None and value == problem.answer
        return float(correct), bool(correct), info

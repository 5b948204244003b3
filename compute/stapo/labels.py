"""Ground-truth spurious tokens on the arithmetic scratchpad (spec stapo §2 "Toy task", a design choice).

A response ``7+5+0=12;4+8+1=13;3+0+1=4;answer 432`` is split at ``;``.  Line i (column i from the right) is
recomputed: its operands must be the problems' column digits (0 beyond the number's length), its operator the
problem's, its carry/borrow the true one of that column (the oracle trace's), and its result x ∘ y ∘ c of the
*written* operands (an arithmetic slip is flagged where it happens, not again downstream).  Every character that differs from the recomputed value is labelled 1 (spurious), the rest
0; the characters of an unparsable line are −1 (unknown, never counted as clean); the answer line and the
separators are 0.  Only reward-1 responses carry spurious tokens: a wrong digit that still ends in the right
answer is the paper's "error inside a correct response".
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

_LINE = re.compile(r"^(\d)([+-])(\d)([+-])(\d)=(-?\d+)$")


def label_trace(a: int, b: int, op: str, text: str) -> list[int]:
    """Per character of ``text``: 1 spurious, 0 clean, −1 unknown (unparsable line)."""
    labels = [0] * len(text)
    da, db = str(a)[::-1], str(b)[::-1]
    pos, carry = 0, 0
    parts = text.split(";")
    for i, line in enumerate(parts):
        start = pos
        pos += len(line) + 1  # the ';'
        if i == len(parts) - 1 and line.startswith("answer"):
            break
        ex = int(da[i]) if i < len(da) else 0
        ey = int(db[i]) if i < len(db) else 0
        true_carry = carry
        tv = ex + ey + carry if op == "+" else ex - ey - carry  # the oracle's column value → next true carry
        carry = (1 if tv >= 10 else 0) if op == "+" else (1 if tv < 0 else 0)
        m = _LINE.match(line)
        if not m:
            for k in range(start, start + len(line)):
                labels[k] = -1
            continue
        x, o1, y, o2, c, r = m.groups()
        wrong = [int(x) != ex, o1 != op, int(y) != ey, o2 != op, int(c) != true_carry]
        for k, w in enumerate(wrong):  # characters 0..4 are x, o1, y, o2, c
            if w:
                labels[start + k] = 1
        xi, yi, ci = int(x), int(y), int(c)
        value = xi + yi + ci if o1 == "+" and o2 == "+" else xi - yi - ci if o1 == "-" and o2 == "-" else None
        r0 = start + 6  # after "x+y+c="
        if value is None:  # mixed operators: the operator tokens are already marked; result unknown
            for k in range(r0, r0 + len(r)):
                labels[k] = -1
        elif int(r) != value:
            want = str(value)
            if len(want) == len(r):
                for k, (ch, ok) in enumerate(zip(r, want, strict=True)):
                    if ch != ok:
                        labels[r0 + k] = 1
            else:
                for k in range(r0, r0 + len(r)):
                    labels[k] = 1
    return labels


def token_labels(batch: Any, tokenizer: Any) -> np.ndarray:
    """Labels [N, R] for a RolloutBatch: 1 spurious, 0 clean, −1 unknown, per response token; rows with
    reward 0 (or a non-arithmetic problem) get 0 wherever parsable — spurious tokens live in correct answers."""
    N, R = batch.response.shape
    out = np.zeros((N, R), dtype=np.int8)
    resp = batch.response.cpu().numpy()
    valid = batch.response_mask.cpu().numpy() > 0
    for i in range(N):
        pr = batch.problems[i]
        if not bool(batch.correct[i]) or not {"a", "b", "op"} <= set(pr.data):
            continue
        pieces = [tokenizer.decode([int(t)]) for t in resp[i][valid[i]]]
        text = "".join(pieces)
        lead = len(text) - len(text.lstrip())
        lab = label_trace(pr.data["a"], pr.data["b"], pr.data["op"], text.strip())
        lab = [0] * lead + lab + [0] * (len(text) - lead - len(lab))
        c = 0
        for t, piece in enumerate(pieces):
            if piece:
                seg = lab[c : c + len(piece)]
                out[i, t] = 1 if 1 in seg else (-1 if -1 in seg else 0)
                c += len(piece)
    return out

"""The ground-truth spurious-token labeller on hand-written traces (spec stapo §5 "Labelling")."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from compute.core.tasks.arithmetic import Arithmetic
from compute.core.tasks.base import Problem
from compute.stapo.labels import label_trace, token_labels


def flagged(a: int, b: int, op: str, text: str) -> list[tuple[int, str]]:
    return [(i, ch) for i, (ch, lab) in enumerate(zip(text, label_trace(a, b, op, text), strict=True)) if lab == 1]


def test_correct_traces_have_no_spurious_tokens() -> None:
    for a, b, op, t in [
        (347, 85, "+", "7+5+0=12;4+8+1=13;3+0+1=4;answer 432"),
        (52, 38, "-", "2-8-0=-6;5-3-1=1;answer 14"),
        (99, 1, "+", "9+1+0=10;9+0+1=10;answer 100"),
        (47, 85, "+", "answer 132"),
    ]:
        assert label_trace(a, b, op, t) == [0] * len(t), t


def test_wrong_result_digit_is_the_only_flagged_token() -> None:
    # 7+5+0 = 12 written as 13: only the '3' (the answer line is still right: reward 1, a spurious token)
    assert flagged(347, 85, "+", "7+5+0=13;4+8+1=13;3+0+1=4;answer 432") == [(7, "3")]
    # a wrong length result: every result character is flagged
    assert flagged(347, 85, "+", "7+5+0=2;4+8+1=13;3+0+1=4;answer 432") == [(6, "2")]
    assert flagged(52, 38, "-", "2-8-0=6;5-3-1=1;answer 14") == [(6, "6")]


def test_wrong_operand_carry_and_operator_are_flagged() -> None:
    # operand 9 instead of 8 (its result 14 is consistent with the written operands, so only the operand)
    assert flagged(347, 85, "+", "7+5+0=12;4+9+1=14;3+0+1=4;answer 432") == [(11, "9")]
    # carry 0 instead of 1 after a line with result 12
    assert flagged(347, 85, "+", "7+5+0=12;4+8+0=12;3+0+1=4;answer 432") == [(13, "0")]
    # a '-' operator in an addition: flagged; the mixed line has no recomputable result (unknown, −1)
    t = "7-5+0=12;4+8+1=13;3+0+1=4;answer 432"
    lab = label_trace(347, 85, "+", t)
    assert flagged(347, 85, "+", t) == [(1, "-")]
    assert lab[6:8] == [-1, -1]


def test_unparsable_lines_are_unknown_not_clean() -> None:
    t = "7+5=12;4+8+1=13;3+0+1=4;answer 432"
    lab = label_trace(347, 85, "+", t)
    assert lab[:6] == [-1] * 6 and lab[6] == 0 and set(lab[7:]) == {0}


def test_token_labels_map_characters_to_tokens_only_in_correct_rows() -> None:
    task = Arithmetic(2, 3)
    tok = task.tokenizer
    p = Problem(key="347+85", question="347+85", answer=432, data={"a": 347, "b": 85, "op": "+"})
    texts = ["7+5+0=13;4+8+1=13;3+0+1=4;answer 432", "7+5+0=13;4+8+1=13;3+0+1=4;answer 433"]
    ids = [tok.encode(t) + [tok.eos_id] for t in texts]
    R = max(map(len, ids))
    resp = torch.full((2, R), tok.pad_id)
    mask = torch.zeros(2, R)
    for i, s in enumerate(ids):
        resp[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    batch = SimpleNamespace(response=resp, response_mask=mask, problems=[p, p], correct=torch.tensor([True, False]))
    lab = token_labels(batch, tok)
    assert np.flatnonzero(lab[0] == 1).tolist() == [7]
    assert (lab[1] == 0).all()  # reward 0: no spurious tokens by definition

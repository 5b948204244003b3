"""Checkers on oracle traces and edge cases; train/test split disjointness; Countdown solver."""

from __future__ import annotations

import numpy as np

from compute.core.tasks import Arithmetic, Countdown, Problem, TaskConfig, WordProblems, in_split, make_task
from compute.core.tasks.countdown import evaluate, solve


def test_oracle_traces_verify_and_round_trip() -> None:
    for name in ("arithmetic", "countdown", "wordproblems"):
        task = make_task(TaskConfig(name=name, p_direct=0.0, p_line_error=0.0))
        rng = np.random.default_rng(0)
        for p in task.sample(30, rng, "train"):
            text = task.solution(p, None)
            assert task.verify(p, text)[:2] == (1.0, True), (name, p.question, text)
            assert task.tokenizer.decode(task.tokenizer.encode(text)) == text
            assert task.prompt(p)[0] == task.tokenizer.bos_id


def test_arithmetic_scratchpad_known_case_and_line_labels() -> None:
    lines, value = Arithmetic.scratchpad(347, 85, "+")
    assert lines == ["7+5+0=12", "4+8+1=13", "3+0+1=4"] and value == 432
    lines, value = Arithmetic.scratchpad(502, 78, "-")
    assert lines == ["2-8-0=-6", "0-7-1=-8", "5-0-1=4"] and value == 424
    t = Arithmetic()
    p = Problem("347+85", "347+85", 432, {"a": 347, "b": 85, "op": "+"})
    r, ok, info = t.verify(p, "7+5+0=12;4+8+1=14;3+0+1=4;answer 442")
    assert (r, ok) == (0.0, False) and info["line_ok"] == [True, False, True]


def test_arithmetic_checker_edge_cases() -> None:
    t = Arithmetic()
    p = Problem("5-10", "5-10", -5, {"a": 5, "b": 10, "op": "-"})
    assert t.verify(p, "answer -5")[1] is True  # negatives parse
    q = Problem("400+32", "400+32", 432, {})
    for bad in ("answer 0432", "answer 432x", "", ";;;", "answer", "432", "answer -0", "answer 4 32", "7/0=;answer 1"):
        r, ok, _ = t.verify(q, bad)
        assert r == 0.0 and ok is False, bad
    assert t.verify(q, "garbage;answer 432")[:2] == (1.0, True)  # the answer decides; lines are only labelled


def test_countdown_solver_and_checker_edge_cases() -> None:
    assert solve([2, 3, 4], 24) and not solve([1, 1, 1], 99)
    c = Countdown()
    p = Problem("use 2,3,4 target 24", "use 2,3,4 target 24", 24, {"numbers": [2, 3, 4]})
    assert c.verify(p, "answer 2*3*4")[1] is True
    assert c.verify(p, "3*2=6;answer (3*2)*4")[1] is True
    for bad in ("answer 24", "answer 4*6", "answer 2*3*4*1", "answer 2/(3-3)*4", "answer (2*3", "answer 02*3*4", "x"):
        r, ok, _ = c.verify(p, bad)
        assert r == 0.0 and ok is False, bad
    assert evaluate("7/2*2")[0] == 7  # exact rational arithmetic


def test_wordproblem_checker_edge_cases() -> None:
    w = WordProblems()
    p = w.sample(1, np.random.default_rng(3), "train")[0]
    assert w.verify(p, w.solution(p))[1] is True
    for bad in ("", "answer", f"answer 0{p.answer}", "9 / 0 = 1 ; answer -1", "tom"):
        assert w.verify(p, bad)[:2] == (0.0, False), bad


def test_splits_are_disjoint_and_deterministic() -> None:
    t = Arithmetic(min_digits=1, max_digits=2)
    train = {p.key for p in t.sample(400, np.random.default_rng(0), "train")}
    test = {p.key for p in t.sample(200, np.random.default_rng(0), "test")}
    assert train and test and not (train & test)
    assert all(in_split(k, "test") for k in test) and not any(in_split(k, "test") for k in train)
    a = [p.key for p in t.sample(20, np.random.default_rng(5), "test")]
    assert a == [p.key for p in t.sample(20, np.random.default_rng(5), "test")]


def test_sft_noise_rates() -> None:
    """p_direct of the traces skip the scratchpad (binomial check, 5 standard errors)."""
    t = Arithmetic(p_direct=0.3, p_line_error=0.0)
    rng = np.random.default_rng(0)
    ps = t.sample(2000, rng, "train")
    direct = np.mean([t.solution(p, rng).startswith("answer") for p in ps])
    assert abs(direct - 0.3) < 5 * np.sqrt(0.3 * 0.7 / 2000)

"""Known-answer tests: grammar, validity checker, leak filter, rewards (spec seirenes §5)."""

import numpy as np
import pytest

from compute.core.tasks.base import Problem
from compute.seirenes.hints import (
    HELDOUT_FAMILIES,
    PATTERNS,
    TRAIN_FAMILIES,
    adversary_reward,
    check_hint,
    family,
    intermediates,
    leaks,
    random_hint,
)
from compute.seirenes.task import SeirenesSFTConfig, make_task


def test_adversary_reward_hand_cases():
    assert adversary_reward(0.75, 0.25, True) == pytest.approx(0.5)
    assert adversary_reward(0.5, 0.75, True) == 0.0
    assert adversary_reward(0.5, 0.75, True, variant="signed") == pytest.approx(-0.25)
    assert adversary_reward(0.0, 0.0, True) == 0.0
    assert adversary_reward(0.0, 0.0, True, variant="signed") == 0.0
    assert adversary_reward(0.75, 0.0, False) == pytest.approx(-0.1)
    assert adversary_reward(0.75, 0.0, False, c_inv=0.3) == pytest.approx(-0.3)


def test_leak_filter_whole_numbers_only():
    assert leaks("<hint> the answer is <close> 19 .", 19)
    assert not leaks("<note> tom also has 190 pens .", 19)
    assert not leaks("<note> tom also has 119 pens .", 19)
    ok, fam, _ = check_hint("<hint> the answer is <close> 19 . <eoh>", 19)
    assert not ok and fam == "F3"
    assert check_hint("<note> tom also has 190 pens . <eoh>", 19) == (True, "F1", "<note> tom also has 190 pens .")


def test_validity_checker_cases():
    assert check_hint("<remember> <multiply> 3 . <eoh>", 7)[0]
    assert not check_hint("<remember> <multiply> 3 .", 7)[0]  # no <eoh>
    assert not check_hint("<remember> <multiply> 3 <eoh>", 7)[0]  # does not parse
    assert not check_hint("<round> the answer to <ten> . <eoh>", 7)[0]  # held-out family is not a training one
    assert not check_hint("<remember> <multiply> 3 . <eoh> <eoh>", 7)[0]
    long = "<note> tom also has 123456789012345678 pens . <eoh>"  # 25 tokens > L_h = 24
    assert not check_hint(long, 7)[0] and check_hint(long, 7, max_tokens=32)[0]


def test_heldout_families_share_no_template():
    rng = np.random.default_rng(0)
    task = make_task(SeirenesSFTConfig())
    for p in task.sample(200, rng, "train"):
        for f in HELDOUT_FAMILIES:
            assert family(random_hint(p, f, rng), TRAIN_FAMILIES) is None
        for f in TRAIN_FAMILIES:
            h = random_hint(p, f, rng)
            assert family(h) == f and family(h, HELDOUT_FAMILIES) is None
            assert check_hint(h + " <eoh>", p.answer)[0]
    train_kw = {w for f in TRAIN_FAMILIES for w in PATTERNS[f].pattern.split() if w.startswith("<")}
    held_kw = {w for f in HELDOUT_FAMILIES for w in PATTERNS[f].pattern.split() if w.startswith("<")}
    assert not train_kw & held_kw


def test_generator_traces_recompute_exactly():
    rng = np.random.default_rng(1)
    task = make_task(SeirenesSFTConfig(max_ops=4))
    for p in task.sample(3_000, rng, "train"):
        vals = intermediates(p)
        assert vals[-1] == p.answer and 0 <= p.answer <= 999
        reward, correct, info = task.verify(p, task.solution(p))
        assert correct and all(info["line_ok"])


def test_valid_hints_do_not_change_answer_or_verifier():
    """The hint is prompt text only: gold answer and verifier are those of the clean question."""
    rng = np.random.default_rng(2)
    task = make_task(SeirenesSFTConfig())
    for p in task.sample(50, rng, "train"):
        h = random_hint(p, "F4", rng)
        clean, hinted = task.prompt(p), task.prompt(p, "solve", {"hint": h})
        assert hinted[: len(clean)] == clean and len(hinted) > len(clean)
        assert task.verify(p, task.solution(p))[1]
    p = Problem(
        "k", "tom has 5 apples . tom buys 3 more apples . how many apples does tom have ?", 8, {"steps": [(5, "+", 3)]}
    )
    assert random_hint(p, "F4", np.random.default_rng(0)).endswith("apples .")

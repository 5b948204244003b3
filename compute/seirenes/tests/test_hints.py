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
    compound_family,
    family,
    family_parts,
    intermediates,
    leaks,
    random_hint,
    sample_hint,
    sentences,
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


def test_sft_mixture_shares_follow_the_config():
    """The SFT mixture: p_adv Adversary examples, p_hinted hinted solves, the rest clean (spec §2: 15/25/60);
    ``sft_p_hinted`` = 0 leaves no hinted solve at all, and the config threads it into the SFT build."""
    from compute.seirenes.config import SeirenesConfig
    from compute.seirenes.task import sft_example

    assert SeirenesConfig().sft().p_hinted == 0.25
    assert SeirenesConfig(sft_p_hinted=0.05).sft().p_hinted == 0.05
    for p_hinted in (0.25, 0.0):
        cfg = SeirenesSFTConfig(p_hinted=p_hinted)
        task = make_task(cfg)
        tok = task.tokenizer
        rng = np.random.default_rng(0)
        kinds = []
        for p in task.sample(2000, np.random.default_rng(1), "train"):
            prompt, resp = sft_example(task, p, rng, cfg)
            kinds.append("adv" if tok.stoi["<adv>"] in prompt else "hinted" if tok.stoi["<h>"] in prompt else "clean")
        share = {k: kinds.count(k) / len(kinds) for k in ("adv", "hinted", "clean")}
        assert abs(share["adv"] - 0.15) < 0.025
        assert abs(share["hinted"] - p_hinted) < 0.025
        assert abs(share["clean"] - (0.85 - p_hinted)) < 0.025
    assert share["hinted"] == 0.0


def test_compound_hints_parse_sentence_by_sentence():
    two = "<note> tom also has 12 pens . <hint> the answer is <close> 40 ."
    assert sentences(two) == ["<note> tom also has 12 pens .", "<hint> the answer is <close> 40 ."]
    assert compound_family(two, 2) == "F1+F3" and family_parts("F1+F3") == ["F1", "F3"]
    assert compound_family(two, 1) is None  # more sentences than allowed
    assert check_hint(two + " <eoh>", 7, 32, max_sentences=2) == (True, "F1+F3", two)
    assert not check_hint(two + " <eoh>", 7, 32)[0]  # the single-sentence grammar rejects it
    assert not check_hint(two + " <eoh>", 40, 32, max_sentences=2)[0]  # the second sentence leaks 40
    bad = "<note> tom also has 12 pens . <round> the answer to <ten> ."  # a held-out sentence inside
    assert compound_family(bad, 3) is None and not check_hint(bad + " <eoh>", 7, 40, max_sentences=3)[0]
    assert compound_family("<note> tom also has 12 pens . <remember> <multiply> 3", 3) is None  # unfinished


def test_sample_hint_single_sentence_matches_the_old_stream_and_compound_is_valid():
    task = make_task(SeirenesSFTConfig(min_ops=2, max_ops=2))
    probs = task.sample(300, np.random.default_rng(1), "train")
    r1, r2 = np.random.default_rng(5), np.random.default_rng(5)
    for p in probs[:100]:  # S = 1 draws exactly what the single-sentence code drew
        body, fam = sample_hint(p, r1, 1)
        assert body == random_hint(p, str(r2.choice(TRAIN_FAMILIES)), r2) and family(body) == fam
    rng = np.random.default_rng(2)
    lengths = []
    for p in probs:
        body, fam = sample_hint(p, rng, 3)
        ok, f, b = check_hint(body + " <eoh>", p.answer, 40, max_sentences=3)
        assert ok and f == fam and b == body
        lengths.append(len(family_parts(fam)))
    assert set(lengths) == {1, 2, 3}  # 1…S sentences, each share near 1/3 over 300 draws
    assert all(abs(lengths.count(k) / len(lengths) - 1 / 3) < 0.1 for k in (1, 2, 3))


def test_checkpoint_name_unchanged_for_single_sentence_builds():
    import hashlib
    import json
    from dataclasses import asdict, replace

    from compute.core.lm.sft import CORE_VERSION
    from compute.seirenes.task import checkpoint_path

    c = SeirenesSFTConfig(tokens=2_500_000, min_ops=2, max_ops=2)
    d = {k: v for k, v in asdict(c).items() if k not in ("hint_sentences", "compound_solves")}  # before the options
    tok = make_task(c).tokenizer.to_dict()
    old = hashlib.sha256(json.dumps({"cfg": d, "tok": tok, "core": CORE_VERSION}, sort_keys=True).encode())
    assert checkpoint_path(c, "d").name == f"sft-small-{old.hexdigest()[:16]}.pt"
    c3 = replace(c, hint_sentences=3)
    names = {checkpoint_path(x, "d") for x in (c, c3, replace(c3, compound_solves=True))}
    assert len(names) == 3  # each mixture has its own cache entry

"""Declarations for Seirênes: self-play training (E1) and arm comparison + transfer attack (E2/E3)."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import Bool, Choice, Experiment, Figure, Float, Int, Line, Paper, Str, Table

PAPER = Paper(
    slug="seirenes",
    title="Seirênes: Adversarial Self-Play with Evolving Distractions for LLM Reasoning",
    abstract=(
        "One parameter-shared policy plays two roles: an Adversary writes plausible but misleading hints for a "
        "question, and a Reasoner solves the question clean and with the hint appended, scored against the original "
        "answer. The Adversary is rewarded by the clean-to-hinted accuracy drop, the Reasoner by correctness on both; "
        "the competition is a co-evolving curriculum. Reported: +10.2 / +9.1 / +7.2 points over the instruct models "
        "(4B / 7B / 30B) on seven math benchmarks, about +4 over a strong RL baseline; hints from the 4B model lower "
        "GPT and Gemini accuracy by 4–5 points."
    ),
    arxiv="2605.11636",
    authors=["Chi Zhang", "Haibo Qiu", "Qiming Zhang", "Yufei Xu", "Xinbo Gao", "Jing Zhang"],
    tags=["reinforcement learning", "self-play", "GRPO", "robustness", "language models"],
    notes=(
        "Runs as a plug-in on the shared tiny-LM + GRPO core, on templated word problems. Faithful: the R1/R2/R3 "
        "bundle (clean solves, Adversary hints, hinted solves scored against the original answer), the drop reward "
        "for the Adversary, Reasoner training on clean and hinted trajectories, unchanged verifier and test format. "
        "Design choices (the paper does not publish them): a hint grammar with four training families and two "
        "held-out families, exact validity and leak checks, r_adv = valid·max(0, p̂_clean − p̂_hint) − c_inv·(1 − "
        "valid), equal role token shares by default (the Adversary share is an option), no KL. See "
        "docs/papers/seirenes.md for measured numbers."
    ),
)

SIZES = [("micro", "micro (tests)"), ("small", "small, 0.8 M"), ("medium", "medium, 2.7 M")]


def _params(steps: int) -> list[Any]:
    return [
        Choice("size", "small", choices=SIZES, label="model size", group="SFT checkpoint"),
        Int(
            "sft_tokens",
            1_500_000,
            min=2_000,
            max=20_000_000,
            log=True,
            label="SFT token budget",
            group="SFT checkpoint",
        ),
        Float("sft_lr", 2e-3, min=1e-5, max=1e-2, log=True, label="SFT learning rate", group="SFT checkpoint"),
        Float(
            "sft_p_hinted",
            0.25,
            min=0.0,
            max=0.5,
            label="SFT share under a training-family hint",
            help="0.25 is the spec's mixture; a smaller share leaves the base model naive to distractors, as the "
            "paper's base models are",
            group="SFT checkpoint",
        ),
        Bool(
            "sft_compound_solves",
            False,
            label="SFT solves under compound hints",
            help="with sentences per hint > 1: the SFT's hinted solves also get compound hints (off: one "
            "training-family sentence, the spec's mixture; the Adversary's SFT examples are compound either way)",
            group="SFT checkpoint",
        ),
        Int(
            "min_ops",
            2,
            min=2,
            max=6,
            label="fewest operations per problem",
            help="2 is the floor: a one-step problem whose answer is 1 admits no non-leaking wrong-intermediate hint",
            group="Task",
        ),
        Int("max_ops", 3, min=2, max=6, label="most operations per problem", group="Task"),
        Int("steps", steps, min=1, max=600, group="Self-play"),
        Int("questions", 8, min=2, max=16, label="questions per step", group="Self-play"),
        Int("n_clean", 6, min=2, max=8, label="G clean samples", group="Self-play"),
        Int("n_hints", 4, min=1, max=8, label="K hints", group="Self-play"),
        Int("n_per_hint", 4, min=2, max=8, label="G_h samples per hint", group="Self-play"),
        Int("hint_tokens", 24, min=8, max=48, label="max hint tokens", group="Self-play"),
        Int(
            "hint_sentences",
            1,
            min=1,
            max=4,
            label="sentences per hint",
            help="compound hints: the Adversary (and the SFT / static-arm sampler) may chain 1…S training-family "
            "sentences, each of which must parse; 1 is the paper-scale single-sentence grammar. Use about 10 hint "
            "tokens per sentence",
            group="Self-play",
        ),
        Float(
            "adv_share",
            1 / 3,
            min=0.05,
            max=0.9,
            label="Adversary token share",
            help="share of the loss's token weight given to the Adversary's hints; clean and hinted solves split the "
            "rest equally. 1/3 is the spec's equal split; a smaller share slows the Adversary against the Reasoner",
            group="Self-play",
        ),
        Float("c_inv", 0.1, min=0.0, max=0.5, label="invalid-hint penalty", group="Self-play"),
        Choice("variant", "clipped", choices=["clipped", "signed"], label="adversary reward", group="Self-play"),
        Bool("drop_counts_format_fail", True, label="format failures count as a drop", group="Self-play"),
        Bool("adv_sees_answer", False, label="Adversary sees the answer", group="Self-play"),
        Float("temperature", 1.0, min=0.7, max=1.2, group="Self-play"),
        Float("lr", 3e-5, min=1e-6, max=1e-2, log=True, label="learning rate", group="Self-play"),
        Int("max_new", 40, min=16, max=96, label="max new tokens", group="Self-play"),
        Int("n_eval", 200, min=8, max=2000, label="held-out problems", group="Evaluation"),
    ]


def _check(p: dict[str, Any]) -> dict[str, str] | None:
    if p.get("max_new", 40) <= p.get("hint_tokens", 24):
        return {"max_new": "must exceed the hint length"}
    if p.get("max_ops", 3) < p.get("min_ops", 2):
        return {"max_ops": "must be at least the fewest operations"}
    return None


# the CPU arm comparison of docs/papers/seirenes.md ("Twice the batch"): Q 8, 16 Reasoner sequences per question
MID_START = {
    "sft_tokens": 2_500_000,
    "steps": 60,
    "questions": 8,
    "n_clean": 8,
    "n_hints": 2,
    "n_per_hint": 4,
    "lr": 3e-5,
    "n_seeds": 3,
}

# two-step problems (min_ops = max_ops = 2), 200 steps: the starts of the two "Two-step problems" sections
TWO_STEP = {**MID_START, "min_ops": 2, "max_ops": 2, "steps": 200}

SMOKE = {
    "size": "micro",
    "sft_tokens": 4000,
    "steps": 2,
    "questions": 2,
    "n_clean": 2,
    "n_hints": 2,
    "n_per_hint": 2,
    "n_eval": 8,
    "hint_tokens": 12,
    "max_new": 16,
}

SELFPLAY = Experiment(
    slug="selfplay",
    title="E1 — Self-play training",
    description=(
        "Seirênes self-play from the shared SFT checkpoint (built on first use, cached).\n"
        "Each step: G clean solves and K Adversary hints per question, then G_h hinted solves per valid hint; the "
        "Adversary is rewarded by the accuracy drop its hint causes. Clean / hinted / held-out-family / self-hinted "
        "greedy accuracy, adversary reward, valid-hint rate, the co-evolution portrait and live top-drop hints."
    ),
    compute="compute.seirenes.run:selfplay_run",
    params=[*_params(30), Int("eval_every", 10, min=1, max=100, label="eval every (steps)", group="Evaluation")],
    presets={
        "smoke": {**SMOKE, "eval_every": 1},
        # docs/papers/seirenes.md, "Compound hints": the Adversary's reward and sentences per hint rise
        "two-step problems, compound hints (CPU)": {
            **{k: v for k, v in TWO_STEP.items() if k != "n_seeds"},
            "hint_sentences": 3,
            "hint_tokens": 36,
            "max_new": 44,
            "eval_every": 100,
        },
        "paper headline": {"size": "medium", "sft_tokens": 5_000_000, "steps": 300, "n_eval": 500},
    },
    panels=[
        Line(
            "Greedy accuracy (held-out problems)",
            keys=["eval/clean", "eval/train_family", "eval/heldout", "eval/self_hinted"],
        ),
        Line("Clean − hinted gap (greedy, training-family suite)", keys=["eval/gap"]),
        Line("Adversary reward and valid-hint rate", keys=["selfplay/adv_reward", "selfplay/valid_rate"]),
        Figure("Co-evolution portrait (p̂_clean vs p̂_hint, coloured by step)", key="portrait"),
        Figure("Hint families over steps", key="families"),
        Line("Sentences per hint (compound hints)", keys=["selfplay/sentences_per_hint"]),
        Line("Dead groups and no-signal share", keys=["selfplay/dead_groups", "selfplay/no_signal_share"]),
        Line("Tokens per role", keys=["selfplay/tokens_*"]),
        Line("Token entropy", keys=["entropy/mean"]),
        Table("Top-drop hints", key="top_hints"),
        Table("Summary", key="summary"),
    ],
    threads=2,
    cost_seconds=240,
    soft_time_limit=7200,
    time_limit=7500,
    check=_check,
)

ARMS = Experiment(
    slug="arms",
    title="E2 + E3 — Arms and transfer attack",
    description=(
        "(a) GRPO-clean, (b) GRPO with random grammar hints, (c) Seirênes, (d) Seirênes with the Adversary frozen at "
        "SFT (arm frozen_adv), from the same SFT checkpoint, same steps, "
        "equal Reasoner sequences per step; greedy accuracy on clean, training-family, held-out-family and "
        "self-hinted (hints of (c)'s Adversary) suites; the accuracy drop each hint source causes on each frozen model."
    ),
    compute="compute.seirenes.run:arms_run",
    params=[
        *_params(30),
        Str(
            "arms",
            "clean,static,seirenes",
            max_length=60,
            pattern=r"^(clean|static|seirenes|frozen_adv)(,(clean|static|seirenes|frozen_adv))*$",
            help="comma list of (a) clean, (b) static, (c) seirenes, (d) frozen_adv (Seirênes with the Adversary "
            "frozen at SFT)",
        ),
        Int("n_seeds", 1, min=1, max=5, label="seeds", group="Evaluation"),
    ],
    presets={
        "smoke": {**SMOKE, "arms": "clean,seirenes"},
        # a 37-42 % start, ~22 min on 1 thread
        "mid-accuracy start (2.5M SFT, CPU)": {**MID_START},
        # docs/papers/seirenes.md, "A base model naive to distractors": hints cost this start 12-20 points
        "hint-naive start (2.5M SFT, 5% hinted, CPU)": {**MID_START, "sft_p_hinted": 0.05},
        # docs/papers/seirenes.md, "Two-step problems": ~90 % clean, hints cost ~63 points; ~26 min per seed, 1 thread
        "two-step problems, hint-naive (CPU)": {**TWO_STEP, "sft_p_hinted": 0.05, "n_seeds": 1},
        # docs/papers/seirenes.md, "Two-step problems with the spec's SFT mixture": 84 % clean, held-out hint
        # families cost ~33 points, training families ~8; ~11 min per seed on 1 thread
        "two-step problems, spec SFT mixture (CPU)": {**TWO_STEP, "n_seeds": 2},
        # docs/papers/seirenes.md, "Compound hints": 1-3 training-family sentences per hint; the SFT's Adversary
        # examples are compound, its hinted solves single-sentence; ~25 min per seed on 1 thread
        "two-step problems, compound hints (CPU)": {
            **TWO_STEP,
            "hint_sentences": 3,
            "hint_tokens": 36,
            "max_new": 44,
            "n_seeds": 1,
        },
        "paper headline": {"size": "medium", "sft_tokens": 5_000_000, "steps": 300, "n_eval": 500, "n_seeds": 3},
    },
    panels=[
        Line("Train accuracy per arm and seed", keys=["curve/*"]),
        Table("Arms (mean ± sd over seeds)", key="arms"),
        Figure("Transfer attack: accuracy drop (points)", key="attack_heatmap"),
        Table("Per-seed results", key="results"),
        Table("Attack matrix", key="attack"),
        Table("Summary", key="summary"),
    ],
    threads=2,
    cost_seconds=600,
    soft_time_limit=14400,
    time_limit=15000,
    check=_check,
)

EXPERIMENTS = [SELFPLAY, ARMS]

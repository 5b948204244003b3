"""Declarations for STAPO (arXiv 2602.15620) on the shared tiny-LM + GRPO core."""

from __future__ import annotations

from typing import Any

from apps.grpo_core import params
from apps.lab.declare import Choice, Experiment, Figure, Float, Int, Line, Paper, Str, Table

PAPER = Paper(
    slug="stapo",
    title="STAPO: stabilizing RL for LLMs by silencing rare spurious tokens",
    abstract=(
        "A tiny fraction of tokens (about 0.01 %) — low probability, low entropy, inside correct (positive-advantage) "
        "responses — inherit the full sequence reward and receive amplified gradients, ‖∇_z‖² = w²(1 − 2p + Σπ²), "
        "which drives entropy drift and late collapse. The S2T mechanism silences them: among rare tokens "
        "(π < τ_p) of positive-advantage responses, the low-entropy share q (H below the candidates' q-quantile) "
        "leaves both the numerator and the denominator of the token-level loss. Here on a tiny character-level "
        "transformer and arithmetic with a redundant scratchpad, where spurious tokens (wrong digits inside "
        "correct answers) are labelled exactly, against GRPO, 20-Entropy and JustRL, with three ablations."
    ),
    arxiv="2602.15620",
    authors=["paperlab reproduction of STAPO (arXiv 2602.15620; no official code)"],
    tags=["reinforcement learning", "GRPO", "entropy", "RLVR", "language models", "spurious tokens"],
    notes=(
        "Faithful: the S2T mask (Â > 0 ∧ π < τ_p ∧ H < quantile_q over the candidate set of the mini-batch), the "
        "renormalised token-level loss, the JustRL/DAPO base (clip [0.8, 1.28], no KL, token-mean), 4 mini-batch "
        "updates per batch, warm-up, the gradient-norm bounds and the entropy lemma. Design choices: τ_p = 0.01 for a "
        "36-symbol vocabulary, the arithmetic task and its spurious-token labeller, π and H from the current "
        "forward. See docs/papers/stapo.md for measured numbers."
    ),
)

ARMS = [
    ("stapo", "STAPO (JustRL + S2T)"),
    ("justrl", "JustRL"),
    ("entropy20", "20-Entropy"),
    ("grpo", "GRPO"),
    ("random_mask", "ablation: random mask"),
    ("inverted_entropy", "ablation: inverted entropy"),
    ("no_renorm", "ablation: no renormalisation"),
]
ARM_IDS = {a for a, _ in ARMS}

SMOKE = {
    "size": "micro",
    "sft_tokens": 4000,
    "min_digits": 1,
    "max_digits": 1,
    "steps": 2,
    "prompts_per_step": 4,
    "group_size": 2,
    "mini_batches": 2,
    "max_new": 24,
    "eval_every": 1,
    "grad_every": 1,
    "n_eval": 8,
    "n_eval_final": 8,
}
HEADLINE = {"size": "medium", "sft_tokens": 5_000_000, "steps": 500, "n_eval": 200, "n_eval_final": 500}


def _common() -> list[Any]:
    return [
        *params.digits(),
        *params.checkpoint(),
        *params.budget(),
        Int("mini_batches", 4, min=1, max=8, label="mini-batches per batch", help="updates per batch", group="Budget"),
        Int("warmup_steps", 10, min=0, max=100, label="lr warm-up steps", group="Budget"),
        Float("tau_p", 0.01, min=1e-4, max=0.1, log=True, label="τ_p (probability threshold)", group="S2T"),
        Float("q", 0.75, min=0.5, max=0.95, label="q (entropy quantile)", group="S2T"),
        Int(
            "grad_every", 5, min=0, max=100, label="gradient-share analysis every (steps)", help="0 = off", group="S2T"
        ),
        *params.evaluation(128, 300, "held-out problems, final (×2 samples)"),
    ]


def _check(p: dict[str, Any]) -> dict[str, str] | None:
    errs = params.check_common(p)
    if p["mini_batches"] > p["prompts_per_step"] * p["group_size"]:
        errs["mini_batches"] = "more mini-batches than rollouts"
    if "arms" in p:
        bad = [a for a in p["arms"].split(",") if a.strip() not in ARM_IDS]
        if bad or not p["arms"].strip():
            errs["arms"] = f"comma-separated arms from {sorted(ARM_IDS)}"
    return errs or None


TRAIN = Experiment(
    slug="train",
    title="Stability run (one arm) and gradient landscape",
    description=(
        "One arm from the cached SFT checkpoint (grpo_core's cache): live token entropy, sampled held-out accuracy "
        "at (T=1, p=1) and (T=0.7, p=0.9), the late-collapse indicator (running max − current), the masked-token "
        "rate beside the ground-truth spurious rate, S2T detector precision/recall against the exact labels, "
        "masked-token types, the gradient-norm share of S2T tokens, gradient norm and clip fractions. "
        "At the end: ‖∇_z‖²/w² over (p, H) with the lemma's bounds and this run's positive-advantage tokens."
    ),
    compute="compute.stapo.run:stapo_run",
    params=[Choice("arm", "stapo", choices=ARMS, group="Method"), *_common()],
    presets={
        "smoke": {**SMOKE, "arm": "stapo"},
        "justrl baseline": {"arm": "justrl"},
        "grpo baseline": {"arm": "grpo"},
        "20-entropy baseline": {"arm": "entropy20"},
        "paper headline": {**HEADLINE, "arm": "stapo"},
    },
    panels=[
        Line("Token entropy", keys=["entropy/mean", "entropy/q10", "entropy/q90"], x_label="step", y_label="nats"),
        Line("Held-out accuracy (sampled)", keys=["acc/t10", "acc/t07", "acc/heldout"], x_label="step"),
        Line("Late-collapse indicator (running max − current)", keys=["collapse/*"], x_label="step"),
        Line(
            "Masked-token rate vs ground-truth spurious rate",
            keys=["s2t/mask_rate", "s2t/detect_rate", "s2t/gt_rate"],
            x_label="step",
            y_log=True,
        ),
        Line("S2T detector vs ground truth", keys=["s2t/precision", "s2t/recall"], x_label="step"),
        Line("Enrichment (precision / base rate)", keys=["s2t/enrichment"], x_label="step"),
        Line("Masked-token types", keys=["mask_type/*"], x_label="step"),
        Line("Gradient-norm share of S2T tokens", keys=["s2t/grad_share"], x_label="step"),
        Line("Gradient norm", keys=["grad/norm"], x_label="step"),
        Line("Clip fractions", keys=["clip/*"], x_label="step"),
        Line("Reward", keys=["reward/train"], x_label="step"),
        Figure("Gradient landscape ‖∇_z‖²/w² over (p, H)", key="landscape"),
        Table("Summary", key="summary"),
    ],
    threads=2,
    cost_seconds=150,
    soft_time_limit=3600,
    time_limit=3900,
    check=_check,
)

COMPARE = Experiment(
    slug="compare",
    title="Arm comparison (shared seeds and SFT checkpoint)",
    description=(
        "GRPO, 20-Entropy, JustRL and STAPO (or the ablations) × seeds from one SFT checkpoint, run one after "
        "another; entropy, sampled accuracy at both decoding settings, mask rate and gradient share overlaid; "
        "per-arm mean ± 95 % CI (t) of the final accuracies (300 problems × 2 samples), the entropy ratio "
        "H_last/H_early, the late-collapse indicator and the mask rate."
    ),
    compute="compute.stapo.run:stapo_compare",
    params=[
        Str("arms", "stapo,justrl,entropy20,grpo", max_length=120, label="arms (comma-separated)", group="Method"),
        Int("n_seeds", 1, min=1, max=5, label="seeds per arm", group="Method"),
        *_common(),
    ],
    presets={
        "smoke": {**SMOKE, "arms": "stapo,grpo", "n_seeds": 1},
        "comparison (lr 3e-5, 5 seeds)": {"arms": "stapo,justrl,entropy20,grpo", "n_seeds": 5, "lr": 3e-5},
        "ablations": {"arms": "stapo,random_mask,inverted_entropy,no_renorm", "n_seeds": 3, "lr": 3e-5},
        "paper headline": {**HEADLINE, "arms": "grpo,entropy20,justrl,stapo", "n_seeds": 3},
    },
    panels=[
        Line("Entropy", keys=["cmp_entropy/*"], x_label="step", y_label="nats"),
        Line("Accuracy at T = 1.0, p = 1.0", keys=["cmp_acc_t10/*"], x_label="step"),
        Line("Accuracy at T = 0.7, p = 0.9", keys=["cmp_acc_t07/*"], x_label="step"),
        Line("Masked-token rate", keys=["cmp_mask/*"], x_label="step"),
        Line("Training reward", keys=["cmp_reward/*"], x_label="step"),
        Table("Per arm (mean ± 95 % CI)", key="summary"),
        Table("Paired over seeds: STAPO − arm (mean ± 95 % CI)", key="paired"),
        Table("Per run", key="runs"),
        Table("SFT starting point (final evaluation)", key="start"),
    ],
    threads=2,
    cost_seconds=600,
    soft_time_limit=14400,
    time_limit=15000,
    check=_check,
)

EXPERIMENTS = [TRAIN, COMPARE]

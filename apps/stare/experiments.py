"""Declarations for STARE (arXiv 2606.19236) on the shared tiny-LM + GRPO core."""

from __future__ import annotations

from typing import Any

from apps.grpo_core import params
from apps.lab.declare import Bool, Choice, Experiment, Figure, Float, Int, Line, Paper, Table

PAPER = Paper(
    slug="stare",
    title="STARE: surprisal-guided token-level advantage reweighting for entropy stability in GRPO",
    abstract=(
        "A first-order analysis of token entropy under GRPO: one policy-gradient step changes a token's entropy by "
        "the trajectory advantage times an entropy-sensitivity function S(a; π) of the next-token distribution, "
        "whose mean under the policy is zero, so entropy drift is the covariance of advantage and surprisal "
        "(four advantage × surprisal quadrants). STARE selects entropy-critical tokens by batch-internal surprisal "
        "quantiles, amplifies high-surprisal positive-advantage tokens (and, in variant C2, damps high-surprisal "
        "negative-advantage ones), and closes the loop with a target-entropy gate. Here on a tiny character-level "
        "transformer and verifiable arithmetic, against GRPO, GRPO with dynamic sampling, DAPO, Clip-Cov and KL-Cov."
    ),
    arxiv="2606.19236",
    authors=["paperlab reproduction of hp-luo/STARE (arXiv 2606.19236)"],
    tags=["reinforcement learning", "GRPO", "entropy", "RLVR", "language models"],
    notes=(
        "Faithful: the selection L± = top max(1, ⌈P·|T±|⌉) by surprisal within the sign-split valid tokens, ω = W / M "
        "inside the token-mean clipped loss (ω not in the denominator), the gate H̄ < H_tgt on π_old's token-mean "
        "entropy, the adaptive W/M schedule, the GRPO-ds base objective (clip 0.2/0.28, dual clip 10, dynamic "
        "sampling). Design choices: H_tgt = κ·H̄_SFT (κ = 0.5), the task and model size, selection over the whole "
        "update batch. See docs/papers/stare.md for measured numbers."
    ),
)

METHODS = [
    ("stare_o1", "STARE-O1 (amplify L+)"),
    ("stare_c2", "STARE-C2 (amplify L+, damp L−)"),
    ("grpo_ds", "GRPO-ds (clip-higher + dynamic sampling)"),
    ("dapo", "DAPO (GRPO-ds + overlong shaping)"),
    ("grpo", "GRPO (symmetric clip)"),
    ("clip_cov", "Clip-Cov"),
    ("kl_cov", "KL-Cov"),
]

SMOKE = {
    "size": "micro",
    "sft_tokens": 4000,
    "min_digits": 1,
    "max_digits": 1,
    "steps": 2,
    "prompts_per_step": 2,
    "group_size": 4,
    "max_new": 24,
    "dynamic_sampling": False,
    "eval_every": 1,
    "n_eval": 8,
    "n_eval_final": 8,
}


def _common() -> list[Any]:
    return [
        Choice(
            "task",
            "arithmetic",
            choices=[("arithmetic", "multi-digit arithmetic"), ("countdown", "Countdown-3")],
            group="Task",
        ),
        *params.digits(help="arithmetic only"),
        *params.checkpoint(),
        *params.budget(),
        Bool(
            "dynamic_sampling",
            True,
            label="dynamic sampling",
            help="for every method except plain GRPO",
            group="Budget",
        ),
        Float("frac", 0.1, min=0.01, max=0.5, label="P (surprisal quantile)", group="STARE"),
        Float("w_pos", 1.1, min=1.0, max=2.0, label="W (L+ weight)", group="STARE"),
        Float("m_neg", 0.9, min=0.5, max=1.0, label="M (L− weight, C2)", group="STARE"),
        Float("kappa", 0.5, min=0.1, max=1.0, label="κ (H_tgt = κ·H_SFT)", group="STARE"),
        Float("target_entropy", 0.0, min=0.0, max=5.0, label="fixed H_tgt (nats)", help="0 = κ·H_SFT", group="STARE"),
        Bool("gated", True, label="target-entropy gate", group="STARE"),
        Bool("adaptive", False, label="adaptive W/M", group="STARE"),
        Float("alpha", 0.01, min=0.0, max=0.2, label="α (adaptive step)", group="STARE"),
        Float(
            "w_max",
            1.5,
            min=1.0,
            max=6.0,
            label="w_max",
            help="upper bound of the adaptive W (paper, 7B: 1.5; the toy model needs more)",
            group="STARE",
        ),
        Float("m_min", 0.5, min=0.0, max=1.0, label="m_min", group="STARE"),
        Int("mini_batches", 1, min=1, max=16, label="mini-batches per rollout batch", group="Budget"),
        Int("ppo_epochs", 1, min=1, max=8, label="PPO epochs per rollout batch", group="Budget"),
        Float("cov_ratio", 2e-4, min=1e-5, max=0.1, log=True, label="Clip-Cov / KL-Cov token share", group="Baselines"),
        *params.evaluation(200, 500),
        Int("passk_problems", 0, min=0, max=500, label="pass@8 problems (0 = off)", group="Evaluation"),
    ]


def _check(p: dict[str, Any]) -> dict[str, str] | None:
    errs = params.check_common(p)
    if p["w_pos"] > p["w_max"]:
        errs["w_pos"] = "must be at most w_max"
    if p["m_neg"] < p["m_min"]:
        errs["m_neg"] = "must be at least m_min"
    return errs or None


_ENTROPY = Line(
    "Entropy with the target band (H_tgt ± 20 %)", keys=["entropy/mean", "band/*"], x_label="step", y_label="nats"
)
TRAIN = Experiment(
    slug="train",
    title="Entropy-controlled training (one method)",
    description=(
        "One method from the cached SFT checkpoint: live token entropy with the target band and the gate state, "
        "reward, held-out greedy accuracy, response length, clip fractions, W/M, and the four-quadrant analysis.\n"
        "Every `analysis_every` steps the batch's per-token entropy is recomputed after the update (same batch, eval "
        "mode) and compared with the first-order prediction A·S(a; π)."
    ),
    compute="compute.stare.run:stare_run",
    params=[
        Choice("method", "stare_o1", choices=METHODS, group="Method"),
        *_common(),
        Int("analysis_every", 5, min=0, max=100, label="ΔH analysis every (steps)", help="0 = off", group="Evaluation"),
    ],
    presets={
        "smoke": {**SMOKE, "method": "stare_c2", "analysis_every": 1},
        "grpo-ds baseline": {"method": "grpo_ds"},
        "dapo baseline": {"method": "dapo"},
        "stare-c2 adaptive": {"method": "stare_c2", "adaptive": True},
        "paper headline": {"size": "medium", "sft_tokens": 5_000_000, "steps": 300, "passk_problems": 64},
    },
    panels=[
        _ENTROPY,
        Line("Gate (1 = reweighting on)", keys=["stare/gate"], x_label="step"),
        Line("Reward and train accuracy", keys=["reward/train", "acc/train"], x_label="step"),
        Line("Held-out greedy accuracy", keys=["acc/heldout"], x_label="step"),
        Line("Response length", keys=["length/mean"], x_label="step", y_label="tokens"),
        Line("Clip fractions", keys=["clip/*"], x_label="step"),
        Line("W and M", keys=["stare/W", "stare/M"], x_label="step"),
        Line("|L+| and |L−| (tokens)", keys=["plugin/stare/L_pos", "plugin/stare/L_neg"], x_label="step"),
        Line("Quadrant token shares", keys=["quad_count/*"], x_label="step"),
        Line("Predicted ΔH per quadrant (A·S, per unit step)", keys=["quad_pred/*"], x_label="step"),
        Line("Measured ΔH per quadrant", keys=["quad_meas/*"], x_label="step", y_label="nats"),
        Line("Predicted vs measured ΔH: correlations", keys=["dH/corr_AS", "dH/corr_lin"], x_label="step"),
        Figure("Measured ΔH vs A·S (latest analysis step)", key="dH_scatter"),
        Line("Dynamic sampling", keys=["groups/*"], x_label="step"),
        Table("Summary", key="summary"),
    ],
    threads=2,
    cost_seconds=240,
    soft_time_limit=3600,
    time_limit=3900,
    check=_check,
)

COMPARE = Experiment(
    slug="compare",
    title="Method comparison (shared seeds and SFT checkpoint)",
    description=(
        "Several methods × seeds from one SFT checkpoint, run one after another; entropy, held-out accuracy, reward, "
        "length and gate curves overlaid; per-method mean ± 95 % CI (t) of the final greedy accuracy, pass@8 and "
        "late-training entropy."
    ),
    compute="compute.stare.run:stare_compare",
    params=[
        Choice(
            "methods",
            "stare_vs_grpo",
            choices=[
                ("stare_vs_grpo", "GRPO-ds vs STARE-O1"),
                ("c2_vs_grpo", "GRPO-ds vs STARE-C2"),
                ("core", "GRPO-ds, DAPO, STARE-O1, STARE-C2"),
                ("all", "all seven"),
            ],
            group="Method",
        ),
        Int("n_seeds", 1, min=1, max=5, label="seeds per method", group="Method"),
        *_common(),
    ],
    presets={
        "smoke": {**SMOKE, "methods": "stare_vs_grpo", "n_seeds": 1},
        "seeds at lr 5e-5": {
            "methods": "stare_vs_grpo",
            "n_seeds": 5,
            "lr": 5e-5,
            "steps": 30,
            "prompts_per_step": 8,
            "frac": 0.02,
            "w_pos": 1.5,
            "kappa": 0.7,
            "eval_every": 30,
            "n_eval": 50,
            "n_eval_final": 200,
        },
        "band control (adaptive C2)": {
            "methods": "c2_vs_grpo",
            "n_seeds": 3,
            "lr": 5e-5,
            "steps": 100,
            "prompts_per_step": 8,
            "frac": 0.05,
            "w_pos": 1.5,
            "m_neg": 0.9,
            "kappa": 0.9,
            "adaptive": True,
            "alpha": 0.1,
            "w_max": 5.0,
            "m_min": 0.3,
            "eval_every": 100,
            "n_eval": 50,
            "n_eval_final": 200,
        },
        "paper headline": {
            "methods": "core",
            "n_seeds": 3,
            "size": "medium",
            "sft_tokens": 5_000_000,
            "steps": 300,
            "passk_problems": 64,
        },
    },
    panels=[
        Line("Entropy (H_tgt dashed)", keys=["cmp_entropy/*"], x_label="step", y_label="nats"),
        Line("Held-out greedy accuracy", keys=["cmp_acc/*"], x_label="step"),
        Line("Training reward", keys=["cmp_reward/*"], x_label="step"),
        Line("Response length", keys=["cmp_length/*"], x_label="step"),
        Line("Gate", keys=["cmp_gate/*"], x_label="step"),
        Table("Per method (mean ± 95 % CI)", key="summary"),
        Table("Per run", key="runs"),
    ],
    threads=2,
    cost_seconds=240,
    soft_time_limit=7200,
    time_limit=7500,
    check=_check,
)

EXPERIMENTS = [TRAIN, COMPARE]

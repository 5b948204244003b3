"""Declarations for the shared core: SFT warm-up build, plain GRPO on verifiable tasks, KV-cache benchmark."""

from __future__ import annotations

from typing import Any

from apps.grpo_core import params
from apps.lab.declare import Bool, Choice, Experiment, Float, Int, IntList, Line, Paper, Table

PAPER = Paper(
    slug="grpo_core",
    title="Shared core: tiny LM + GRPO",
    abstract=(
        "The base every RL-with-verifiable-rewards paper app builds on: a tiny decoder-only transformer (RMSNorm, "
        "RoPE, GELU/ReGLU, tied embeddings) with a KV cache; synthetic verifiable tasks (multi-digit arithmetic with "
        "a checkable scratchpad, Countdown, templated word problems) with exact checkers; an SFT warm-up build that "
        "is cached per config; and a GRPO trainer (GRPO / Dr. GRPO / RLOO advantages, PPO clip with dual clip, DAPO "
        "clip-higher, dynamic sampling, token-level loss and overlong shaping, k3 KL) with plug-in hooks."
    ),
    arxiv="2402.03300",
    authors=["paperlab (after Shao et al. 2024 — GRPO; Yu et al. 2025 — DAPO; Liu et al. 2025 — Dr. GRPO)"],
    tags=["reinforcement learning", "GRPO", "language models", "RLVR", "infrastructure"],
    notes=(
        "Faithful: group advantages (grpo (r−μ)/(σ+1e-6) with Bessel σ as in verl; drgrpo r−μ; rloo), the PPO clipped "
        "surrogate with dual clip, clip-higher, DAPO dynamic sampling with a round cap, soft overlong shaping, "
        "token-mean / seq-mean-token-mean / constant aggregation, k3 KL, unbiased pass@k. Design choices: model "
        "sizes (micro/small/medium/large), character/word tokenizers, task generators and SFT noise (direct answers "
        "and wrong scratchpad lines give the warm-up policy entropy and room to improve), the hook interface. "
        "See docs/papers/grpo_core.md for the plug-in API and measured numbers."
    ),
)

SIZES = [
    ("micro", "micro (tests)"),
    ("small", "small, 0.8 M"),
    ("medium", "medium, 2.7 M"),
    ("large", "large, 6.4 M (GPU)"),
]
TASKS = [("arithmetic", "multi-digit arithmetic"), ("countdown", "Countdown-3"), ("wordproblems", "word problems")]


def _sft_params() -> list[Any]:
    return [
        Choice("task", "arithmetic", choices=TASKS, group="Task"),
        *params.digits(8, help="arithmetic only"),
        *params.checkpoint(SIZES),
        params.sft_lr(),
        Int("n_eval", 200, min=8, max=2000, label="held-out problems per eval", group="Evaluation"),
    ]


def _check_digits(p: dict[str, Any]) -> dict[str, str] | None:
    return params.check_common(p) or None


def _check_grpo(p: dict[str, Any]) -> dict[str, str] | None:
    errs = params.check_common(p)
    if p["task"] == "wordproblems" and p["max_new"] < 32:
        errs["max_new"] = "word-problem traces need at least 32 tokens"
    return errs or None


SFT_BUILD = Experiment(
    slug="sft_build",
    title="SFT warm-up checkpoint",
    description=(
        "Build (or reuse) the supervised warm-up checkpoint every RL run starts from.\n"
        "Cross-entropy on the oracle scratchpad traces (response tokens only), AdamW with warm-up and cosine decay. "
        "Cached under the data directory, keyed by a hash of the model/tokenizer/task/SFT config."
    ),
    compute="compute.core.rl.run:sft_build",
    params=_sft_params(),
    presets={
        "smoke": {"size": "micro", "sft_tokens": 4000, "min_digits": 1, "max_digits": 1, "n_eval": 8},
        "paper headline": {"size": "medium", "sft_tokens": 5_000_000},
    },
    panels=[
        Line("Loss", keys=["sft/train_loss", "sft/val_loss"], x_label="tokens", y_label="cross-entropy"),
        Line("Held-out greedy accuracy", keys=["sft/val_accuracy"], x_label="tokens"),
        Line("Throughput", keys=["sft/tokens_per_s"], x_label="tokens", y_label="tokens/s"),
        Table("Checkpoint", key="summary"),
    ],
    threads=2,
    cost_seconds=240,
    check=_check_digits,
)

GRPO_RUN = Experiment(
    slug="grpo_run",
    title="Plain GRPO on a verifiable task",
    description=(
        "GRPO from the cached SFT checkpoint: held-out accuracy, reward and token entropy, live.\n"
        "G samples per prompt, group advantages, PPO clip (dual clip), optional DAPO clip-higher / dynamic sampling / "
        "overlong shaping and k3 KL. The SFT checkpoint is built first when missing."
    ),
    compute="compute.core.rl.run:grpo_run",
    params=[
        *_sft_params(),
        Choice("estimator", "grpo", choices=[("grpo", "GRPO"), ("drgrpo", "Dr. GRPO"), ("rloo", "RLOO")], group="GRPO"),
        Choice(
            "loss_agg",
            "token-mean",
            choices=["token-mean", "seq-mean-token-mean", "constant"],
            label="loss aggregation",
            group="GRPO",
        ),
        Float("eps_low", 0.2, min=0.0, max=1.0, label="ε_low", group="GRPO"),
        Float("eps_high", 0.2, min=0.0, max=1.0, label="ε_high", help="0.28 = DAPO clip-higher", group="GRPO"),
        Float("dual_clip", 10.0, min=1.0, max=100.0, label="dual clip c", group="GRPO"),
        Bool("dynamic_sampling", False, label="DAPO dynamic sampling", group="GRPO"),
        Int(
            "overlong_cache",
            0,
            min=0,
            max=128,
            label="overlong L_c",
            help="0 = off; L_max = max new tokens",
            group="GRPO",
        ),
        Float("kl_coef", 0.0, min=0.0, max=1.0, label="KL β (k3)", group="GRPO"),
        *params.budget(lr=3e-5, lr_min=1e-6, prompts_min=1),
        Int("eval_every", 10, min=1, max=100, label="eval every (steps)", group="Evaluation"),
        Int("n_eval_final", 500, min=8, max=5000, label="held-out problems, SFT vs final", group="Evaluation"),
    ],
    presets={
        "smoke": {
            "size": "micro",
            "sft_tokens": 4000,
            "min_digits": 1,
            "max_digits": 1,
            "steps": 2,
            "prompts_per_step": 2,
            "group_size": 2,
            "max_new": 24,
            "eval_every": 1,
            "n_eval": 8,
            "n_eval_final": 8,
        },
        "dapo": {"eps_high": 0.28, "dynamic_sampling": True, "overlong_cache": 16, "loss_agg": "token-mean"},
        "paper headline": {"size": "medium", "sft_tokens": 5_000_000, "steps": 300},
    },
    panels=[
        Line("Reward and train accuracy", keys=["reward/train", "acc/train"], x_label="step"),
        Line("Held-out greedy accuracy", keys=["acc/heldout"], x_label="step"),
        Line("Token entropy (mean, 10/50/90 %)", keys=["entropy/*"], x_label="step", y_label="nats"),
        Line("Response length", keys=["length/mean"], x_label="step", y_label="tokens"),
        Line("Clip fractions", keys=["clip/*"], x_label="step"),
        Line("Approximate KL", keys=["kl/approx"], x_label="step"),
        Line("Gradient norm", keys=["grad/norm"], x_label="step"),
        Line("Time per phase", keys=["time/*"], x_label="step", y_label="s"),
        Table("SFT vs GRPO", key="summary"),
    ],
    threads=2,
    cost_seconds=240,
    soft_time_limit=3600,
    time_limit=3900,
    check=_check_grpo,
)

SAMPLING = Experiment(
    slug="sampling_benchmark",
    title="KV cache vs full recompute",
    description="Tokens/s of batched sampling with and without the KV cache (same model, same process).",
    compute="compute.core.rl.run:sampling_benchmark",
    params=[
        Choice("size", "small", choices=SIZES, label="model size"),
        IntList("batches", [128], min=1, max=512, min_len=1, max_len=6, label="batch sizes"),
        IntList("lengths", [32, 64], min=4, max=256, min_len=1, max_len=6, label="new tokens"),
    ],
    presets={
        "smoke": {"size": "micro", "batches": [4], "lengths": [8]},
        "paper headline": {"size": "small", "batches": [128], "lengths": [48, 64]},
    },
    panels=[Line("Speed-up", keys=["bench/speedup"], x_label="case"), Table("Tokens/s", key="sampling")],
    threads=2,
    cost_seconds=120,
)

EXPERIMENTS = [SFT_BUILD, GRPO_RUN, SAMPLING]

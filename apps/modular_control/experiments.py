"""Declarations of the modular_control paper and its four experiments (no Django, no compute imports)."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import Bool, Choice, Experiment, Figure, Float, FloatList, Int, Line, Paper, Table

PAPER = Paper(
    slug="modular_control",
    title="Modular Recurrence in Contextual MDPs for Universal Morphology Control",
    abstract=(
        "A universal controller for many robot morphologies generalises better when the relevant context "
        "(dynamics, kinematic relations, topology) is treated as partially observable and inferred through "
        "interaction.  A modular recurrent architecture — a GRU shared by all limbs over each limb's own "
        "action–observation history, followed by attention across limbs — controls a large set of MuJoCo robots "
        "and generalises zero-shot to robots with unseen dynamics, kinematics and topologies in four environments."
    ),
    arxiv="2506.08630",
    authors=["Laurens Engwegen", "Daan Brinks", "Wendelin Böhmer"],
    tags=["reinforcement learning", "morphology-agnostic control", "transformers", "recurrence", "MuJoCo"],
    notes=(
        "Scaled-down reproduction on the SMP robot set (modular-mujoco-envs 1.5 XMLs: walkers, hoppers, "
        "half-cheetahs, 2-D humanoids; 38 robots) in MuJoCo 4.  The 15 walker/hopper files use coordinate='global', "
        "which MuJoCo ≥ 2.3.3 rejects; a global→local converter is checked against body positions recorded with "
        "mujoco 2.3.2.  Per-limb observations are in the torso frame; the observable context c⁺ (mass, inertia, "
        "geometry, joint range/axis, gear, depth) is given, the hidden context c⁻ (damping, friction, armature) is "
        "randomised per episode and per limb and never shown.  Architectures: padded MLP, MetaMorph, Amorpheus, "
        "ModuMorph and ModRec, all trained with the same recurrent PPO (truncated BPTT over 16-step chunks).  "
        "Normalised return = (R − R_random)/(R_ref − R_random), R_ref the best in-distribution return across "
        "architectures (design).  On 2 CPU cores the budgets are tens of thousands of steps, far below the paper's: "
        "the default runs show rising returns, not gaits, and no ranking is claimed from them."
    ),
)

FAMILIES = [
    ("walker", "walkers (12 robots)"),
    ("hopper", "hoppers (3)"),
    ("cheetah", "half-cheetahs (15)"),
    ("humanoid", "2-D humanoids (8)"),
    ("walker+hopper", "walkers + hoppers"),
    ("all", "all four families (38)"),
]
ARCHS = [
    ("modrec", "ModRec (shared per-limb GRU → attention; the paper's method)"),
    ("metamorph", "MetaMorph (Transformer + DFS position embedding)"),
    ("amorpheus", "Amorpheus (Transformer, no position embedding)"),
    ("modumorph", "ModuMorph (hypernetwork + fixed attention)"),
    ("mlp", "padded MLP"),
]
ARCH_SETS = [
    ("paper four", "MLP, MetaMorph, ModuMorph, ModRec"),
    ("modrec vs metamorph", "ModRec vs MetaMorph"),
    ("all five", "all five architectures"),
]
REVEAL = [
    ("none", "none (c⁻ hidden; default)"),
    ("damping", "damping revealed"),
    ("all", "damping, friction and armature revealed"),
]


def _train_cost(p: dict[str, Any]) -> float:
    """≈ seconds on 2 idle cores: ~700 env steps/s with PPO updates for 8 slots."""
    return p["steps"] / 700.0


TRAIN = Experiment(
    slug="train",
    title="Multi-robot training with live returns per robot",
    description=(
        "Train one architecture with recurrent PPO on the training robots of the chosen families.\n"
        "Each of the env slots takes the next robot round-robin with fresh per-limb damping, friction and armature "
        "factors U[0.7, 1.3] each episode; ~30% of each family's XMLs are held out for the zero-shot experiment.  "
        "Streams per-robot returns, PPO statistics and throughput, and ends with a stick-figure episode.  "
        "The default 60k steps shows rising returns, not gaits; no ranking of architectures is claimed from it."
    ),
    compute="compute.modular_control.run:train",
    params=[
        Choice("families", "walker", choices=FAMILIES, group="Robots"),
        Int("split_seed", 0, min=0, max=99, label="train/test split seed", group="Robots"),
        Choice("arch", "modrec", choices=ARCHS, label="architecture", group="Model"),
        Choice(
            "order",
            "rnn_then_attn",
            choices=[("rnn_then_attn", "GRU then attention"), ("attn_then_rnn", "attention then GRU")],
            label="ModRec order",
            group="Model",
        ),
        Choice("reveal", "none", choices=REVEAL, label="hidden-context fields made visible", group="Model"),
        Int("steps", 60_000, min=256, max=5_000_000, log=True, label="environment steps", group="PPO"),
        Int("n_slots", 8, min=1, max=32, label="env slots", group="PPO"),
        Int("bptt", 16, min=1, max=128, label="BPTT chunk length", group="PPO"),
        Int("epochs", 2, min=1, max=8, label="PPO epochs", group="PPO"),
        Int("episode_len", 500, min=20, max=1000, label="episode length (steps at 25 Hz)", group="PPO"),
        Bool("recurrent", True, label="ModRec: recurrence on", group="Ablation"),
        Bool("attn", True, label="attention on", group="Ablation"),
        Bool("use_ctx", True, label="context input on", group="Ablation"),
    ],
    presets={
        "smoke": {"families": "hopper", "steps": 256, "n_slots": 2, "episode_len": 20},
        "default (60k, walkers)": {},
        "paper headline": {"families": "all", "steps": 1_000_000, "epochs": 4, "episode_len": 1000},
    },
    panels=[
        Line("Return per training robot", keys=["return/*"], x_label="env steps", y_label="episode return", width=8),
        Line("Mean return over robots", keys=["train/mean_return"], x_label="env steps", width=4),
        Line("PPO: approx. KL, clip fraction", keys=["ppo/approx_kl", "ppo/clipfrac"], x_label="env steps", width=4),
        Line("PPO: policy entropy", keys=["ppo/entropy"], x_label="env steps", width=4),
        Line(
            "Throughput",
            keys=["speed/env_steps_per_s", "speed/update_samples_per_s"],
            x_label="env steps",
            y_label="per second",
            width=4,
        ),
        Figure("Episode (stick figure, x–z plane)", key="frames", width=6),
        Table("Run summary", key="train_summary", width=3),
        Table("Train / held-out split", key="split", width=3),
    ],
    cost_seconds=90,
    soft_time_limit=7000,
    time_limit=7200,
)


def _zs_check(p: dict[str, Any]) -> dict[str, str] | None:
    if p["axis"] in ("dynamics", "all") and len(p["scale_grid"]) < 2:
        return {"scale_grid": "give at least two dynamics scales to draw the degradation curve"}
    return None


ZERO_SHOT = Experiment(
    slug="zero_shot",
    title="Zero-shot return on unseen dynamics, kinematics and topologies",
    description=(
        "Normalised return of each architecture on robots it never saw, mean ± sd over seeds.\n"
        "Checkpoints come from the cache (trained on first use with the E1 defaults and the given step budget).  "
        "Axes: out-of-range dynamics ([0.4, 0.7) ∪ (1.3, 1.6] per limb) and a fixed-scale grid, limb lengths ×0.7 "
        "and ×1.3, and the held-out XMLs.  Normalised return = (R − R_random)/(R_ref − R_random) with R_ref the "
        "robot's best in-distribution return across architectures."
    ),
    compute="compute.modular_control.run:zero_shot",
    params=[
        Choice("archs", "paper four", choices=ARCH_SETS, label="architectures"),
        Choice("families", "walker", choices=FAMILIES),
        Int("split_seed", 0, min=0, max=99, label="train/test split seed"),
        Int("train_steps", 20_000, min=256, max=5_000_000, log=True, label="training steps per checkpoint"),
        Int("n_seeds", 1, min=1, max=5, label="seeds per architecture"),
        Choice(
            "axis",
            "all",
            choices=[
                ("all", "all axes"),
                ("dynamics", "dynamics"),
                ("kinematics", "kinematics"),
                ("topology", "topology"),
            ],
            label="out-of-distribution axis",
        ),
        FloatList(
            "scale_grid", [0.4, 0.7, 1.0, 1.3, 1.6], min=0.1, max=4.0, min_len=1, max_len=12, label="dynamics scales"
        ),
        Int("eval_len", 200, min=10, max=1000, label="evaluation episode length"),
        Int("eval_reps", 1, min=1, max=8, label="episodes per robot and condition"),
        Int("n_slots", 8, min=1, max=32, label="env slots of the training runs"),
    ],
    presets={
        "smoke": {
            "archs": "modrec vs metamorph",
            "families": "hopper",
            "train_steps": 256,
            "n_slots": 2,
            "scale_grid": [0.5, 1.5],
            "eval_len": 10,
        },
        "paper headline": {"families": "all", "train_steps": 1_000_000, "n_seeds": 2, "eval_len": 1000, "eval_reps": 2},
    },
    panels=[
        Table("Normalised zero-shot return (mean ± sd over seeds)", key="zero_shot", width=12),
        Line(
            "Normalised return vs dynamics scale",
            keys=["dyn_scale/*"],
            x_label="damping/friction/armature scale",
            y_label="normalised return",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Table("Slope of normalised return vs |log scale|", key="slopes", width=6),
        Figure("Robot × architecture (raw return, OOD conditions)", key="heatmap", width=6),
        Figure("Unseen robot, out-of-range dynamics (stick figure)", key="frames", width=6),
        Table("Raw returns", key="raw_returns", width=12),
    ],
    cost_seconds=240,
    soft_time_limit=20000,
    time_limit=21600,
    check=_zs_check,
)

PROBE = Experiment(
    slug="context_probe",
    title="Context probe: does the recurrent state encode the hidden damping?",
    description=(
        "Ridge-regression probe R²(t) of each limb's hidden log-damping factor from ModRec's h^i_t vs MetaMorph's "
        "limb embeddings.\nRobots roll out with per-limb damping factors log-uniform in [lo, hi] (friction and "
        "armature fixed); the probe is fitted at each t on half of the episodes and scored on the other half.  "
        "The paper's claim: R² rises with t for the recurrent state and stays ≈ 0 for feed-forward tokens."
    ),
    compute="compute.modular_control.run:context_probe",
    params=[
        Choice("families", "cheetah", choices=FAMILIES, help="cheetahs have the largest joint damping"),
        Int("split_seed", 0, min=0, max=99),
        Int("train_steps", 30_000, min=256, max=5_000_000, log=True, label="training steps per checkpoint"),
        Int("episodes", 128, min=4, max=512, label="probe episodes (half fit, half scored)"),
        Int("horizon", 60, min=2, max=500, label="steps per episode"),
        FloatList("damping_range", [0.25, 4.0], min=0.05, max=20.0, min_len=2, max_len=2, label="damping factor range"),
        Float("ridge", 10.0, min=1e-4, max=1e4, log=True, label="ridge penalty α"),
        Int("n_slots", 8, min=1, max=32, label="env slots of the training runs"),
    ],
    presets={
        "smoke": {"families": "hopper", "train_steps": 256, "n_slots": 2, "episodes": 6, "horizon": 4},
        "paper headline": {"families": "cheetah", "train_steps": 1_000_000, "episodes": 256, "horizon": 100},
    },
    panels=[
        Line(
            "Probe R² of hidden log-damping vs t", keys=["probe/*"], x_label="t (control steps)", y_label="R²", width=8
        ),
        Table("Probe summary", key="probe_summary", width=4),
    ],
    cost_seconds=120,
    soft_time_limit=20000,
    time_limit=21600,
)

ABLATION = Experiment(
    slug="ablation",
    title="Ablations: recurrence × attention × context",
    description=(
        "ModRec with its GRU, its attention and its context input each switched on or off (2³ runs).\n"
        "Returns on the training robots, with out-of-range dynamics, and on held-out XMLs.  Background job."
    ),
    compute="compute.modular_control.run:ablation",
    params=[
        Choice("families", "walker", choices=FAMILIES),
        Int("split_seed", 0, min=0, max=99),
        Int("train_steps", 30_000, min=256, max=5_000_000, log=True, label="training steps per configuration"),
        Int("eval_len", 200, min=10, max=1000, label="evaluation episode length"),
        Choice("subset", "all", choices=[("all", "all 2³"), ("recurrence", "recurrence on/off only")]),
        Int("n_slots", 8, min=1, max=32, label="env slots of the training runs"),
    ],
    presets={
        "smoke": {"families": "hopper", "train_steps": 256, "n_slots": 2, "eval_len": 10, "subset": "recurrence"},
        "paper headline": {"families": "all", "train_steps": 1_000_000, "eval_len": 1000},
    },
    panels=[
        Table("Ablation returns", key="ablation", width=12),
        Line("Dynamics-OOD return per configuration", keys=["ablation/*"], x_label="configuration", width=6),
    ],
    cost_seconds=600,
    soft_time_limit=40000,
    time_limit=43200,
)

EXPERIMENTS = [TRAIN, ZERO_SHOT, PROBE, ABLATION]

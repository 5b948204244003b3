"""Declarations of the sae_replay paper and its experiments (no Django, no compute imports)."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import (
    Bar,
    Bool,
    Choice,
    Experiment,
    Figure,
    Float,
    Int,
    IntList,
    Line,
    Paper,
    Table,
)

PAPER = Paper(
    slug="sae_replay",
    title="Sparse autoencoders from replayed activation buffers: a diversity–repetition scaling law",
    abstract=(
        "SAE quality depends mainly on the number of unique activations, not on their freshness: after a short "
        "diversity-limited regime, replaying a smaller stored buffer preserves reconstruction and "
        "interpretability.  A data-constrained scaling law captures the diversity/repetition trade-off and gives a "
        "buffer-sizing rule (the smallest buffer that reaches the plateau, then replay), for 8–64× less activation "
        "storage with negligible quality loss, across dictionary sizes, budgets, models, layers and TopK, "
        "BatchTopK and JumpReLU SAEs."
    ),
    arxiv="",
    authors=[],
    tags=["sparse autoencoders", "interpretability", "scaling laws", "data repetition", "NeurIPS 2026"],
    notes=(
        "DESIGN RECONSTRUCTION: the paper's text could not be located; only its abstract is known.  SAEs follow "
        "Gao et al. 2024 (TopK + AuxK), Bussmann et al. 2024 (BatchTopK) and Rajamanoharan et al. 2024 (JumpReLU, "
        "rectangle-kernel straight-through θ gradient); unit-norm decoder columns with the parallel gradient "
        "removed; b_dec at the data mean; one normalization E‖x‖ = √d for every arm.  Replay: a pool of U rows "
        "reshuffled every epoch so each row is seen exactly R = T/U times, at the same T, steps, LR schedule and L0 "
        "as fresh data; a small-but-fresh arm trains U tokens once.  Metrics are on held-out activations only.  "
        "The law is Muennighoff et al.'s effective data D′ = U + U·R*(1 − e^{−(R−1)/R*}) in L = E + A/N^α + B/D′^β, "
        "fitted on log L with a Huber loss and L-BFGS.  Sources: a synthetic sparse-feature generator with known "
        "features and hierarchies (exact recovery and absorption), and the MiniLM-L6 residual stream over BBC News "
        "(model and text from PyPI wheels, forward pass written here).  Auto-interpretability is replaced by a "
        "labelled PROXY (detection score of a modal-label explanation)."
    ),
)

SOURCES = [("synthetic", "synthetic sparse features (ground truth)"), ("minilm", "MiniLM-L6 residual stream, BBC News")]
ARCHS = [("topk", "TopK (+AuxK)"), ("batchtopk", "BatchTopK"), ("jumprelu", "JumpReLU")]


def _source_params(m: int = 512, k: int = 8) -> list[Any]:
    return [
        Choice("source", "synthetic", choices=SOURCES, group="Activations"),
        Int(
            "layer",
            3,
            min=1,
            max=5,
            label="MiniLM layer",
            help="residual stream after block L of 6",
            group="Activations",
        ),
        Int("d", 64, min=8, max=256, label="synthetic width d", group="Activations"),
        Int("n_feat", 512, min=16, max=4096, label="synthetic true features", group="Activations"),
        Float("noise", 0.01, min=0.0, max=1.0, label="synthetic noise σ", group="Activations"),
        Int("n_hier", 8, min=0, max=32, label="synthetic parent→child hierarchies", group="Activations"),
        Int("cache_tokens_log2", 17, min=12, max=20, label="MiniLM cache: log2 training tokens", group="Activations"),
        Choice("arch", "topk", choices=ARCHS, label="SAE architecture", group="SAE"),
        Int("m", m, min=32, max=16384, log=True, label="dictionary size", group="SAE"),
        Int("k", k, min=1, max=64, label="target L0 (k)", group="SAE"),
        Int("batch", 1024, min=64, max=8192, log=True, label="batch size", group="SAE"),
        Float("lr", 1e-2, min=1e-5, max=0.1, log=True, label="Adam learning rate", group="SAE"),
        Float("l0_coeff", 0.0, min=0.0, max=10.0, label="JumpReLU λ (0 = calibrate to k)", group="SAE"),
        Int("n_eval_log2", 14, min=10, max=16, label="log2 held-out activations", group="Evaluation"),
        Int("n_evals", 8, min=1, max=64, label="live evaluations per arm", group="Evaluation"),
    ]


def _check_common(p: dict[str, Any], t_key: str | None = "t_log2") -> dict[str, str] | None:
    if p["source"] == "synthetic" and p["n_feat"] < p["d"]:
        return {"n_feat": "needs n_feat ≥ d (features in superposition)"}
    if p["source"] == "synthetic" and p["n_hier"] * 4 > p["n_feat"]:
        return {"n_hier": "each hierarchy takes 4 features: lower n_hier or raise n_feat"}
    if p["k"] >= p["m"]:
        return {"k": "k must be smaller than the dictionary size m"}
    if t_key and p["source"] == "minilm" and p[t_key] > p["cache_tokens_log2"]:
        return {t_key: "the fresh arm needs T ≤ cached tokens: raise cache_tokens_log2 or lower T"}
    return None


def _check_sweep(p: dict[str, Any]) -> dict[str, str] | None:
    err = _check_common(p)
    if err:
        return err
    T = 1 << p["t_log2"]
    if any(T // r < p["batch"] for r in p["r_list"]):
        return {"r_list": "every pool U = T/R must hold at least one batch"}
    if any(T % r for r in p["r_list"]):
        return {"r_list": "replay factors must divide T (use powers of two)"}
    return None


SWEEP = Experiment(
    slug="replay_sweep",
    title="Replay sweep: quality vs unique activations at fixed budget T",
    description=(
        "Fresh data vs a buffer of U = T/R unique activations replayed R times vs small-but-fresh (U tokens once).\n"
        "Equal T, steps, per-step LR schedule and L0 across arms; every metric on held-out activations. Shows the "
        "plateau of held-out EV in R, where it breaks (R_crit), the memorization gap and ground-truth recovery."
    ),
    compute="compute.sae_replay.run:replay_sweep",
    params=[
        *_source_params(),
        Int("t_log2", 18, min=12, max=24, label="log2 training tokens T", group="Replay"),
        IntList(
            "r_list", [4, 16, 64], min=2, max=1024, min_len=1, max_len=10, label="replay factors R", group="Replay"
        ),
        Bool("small_fresh", True, label="small-but-fresh arms", group="Replay"),
        Int("fresh_seeds", 1, min=1, max=5, label="fresh seeds (reference band)", group="Replay"),
        Float("tol_ev", 0.005, min=0.0, max=0.1, label="plateau tolerance |ΔEV|", group="Replay"),
    ],
    presets={
        "smoke": {
            "t_log2": 13,
            "r_list": [4],
            "m": 64,
            "d": 16,
            "n_feat": 64,
            "n_hier": 2,
            "batch": 256,
            "n_eval_log2": 10,
            "n_evals": 2,
        },
        "paper headline": {"t_log2": 20, "r_list": [2, 4, 8, 16, 32, 64], "small_fresh": True},
        # one seed of the multi-seed plateau measurement (docs §4.1b): run with --seed 0, 1, 2
        "plateau seeds": {"t_log2": 20, "r_list": [8, 16, 32, 64], "small_fresh": False},
        "batchtopk": {"arch": "batchtopk"},
        "jumprelu": {"arch": "jumprelu"},
        "minilm layer 3": {
            "source": "minilm",
            "layer": 3,
            "m": 1536,
            "k": 16,
            "t_log2": 17,
            "r_list": [4, 16, 64],
            "lr": 3e-3,
        },
    },
    panels=[
        Line("Held-out EV vs training tokens (live)", keys=["ev/*"], x_label="tokens", y_label="EV", width=6),
        Line(
            "Held-out nMSE vs training tokens", keys=["nmse/*"], x_label="tokens", y_label="nMSE", y_log=True, width=6
        ),
        Line(
            "Final held-out EV vs replay factor (fresh ± tolerance band)",
            keys=["final/*"],
            x_label="replay factor R",
            y_label="EV",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Line(
            "Pool EV vs held-out EV",
            keys=["pool/*"],
            x_label="R",
            y_label="EV",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Line(
            "Memorization gap (pool − held-out EV)",
            keys=["gap/*"],
            x_label="R",
            x_log=True,
            mode="lines+markers",
            width=4,
        ),
        Line("L0", keys=["sparsity/*"], x_label="R", x_log=True, mode="lines+markers", width=4),
        Line("Dead-latent fraction", keys=["dead/*"], x_label="R", x_log=True, mode="lines+markers", width=4),
        Line(
            "Ground truth: MMCS and fraction recovered (cos > 0.9)",
            keys=["truth/*"],
            x_label="R",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Table("Plateau (ΔEV vs fresh)", key="plateau", width=6),
        Table("All arms", key="final", width=12),
    ],
    cost_seconds=120,
    soft_time_limit=3000,
    time_limit=3300,
    check=_check_sweep,
)


def _check_scaling(p: dict[str, Any]) -> dict[str, str] | None:
    err = _check_common(p, None)
    if err:
        return err
    if len(p["u_log2_list"]) * len(p["r_list"]) * max(1, len(p["m_list"])) < 6:
        return {"r_list": "the law has up to 6 parameters: use at least 6 (U, R) runs"}
    if len(set(p["r_list"])) < 3:
        return {"r_list": "R* needs at least 3 distinct replay factors"}
    if p["source"] == "minilm" and max(p["u_log2_list"]) > p["cache_tokens_log2"]:
        return {"u_log2_list": "U must fit in the cache"}
    if (1 << min(p["u_log2_list"])) < p["batch"]:
        return {"u_log2_list": "every pool U must hold at least one batch"}
    return None


SCALING = Experiment(
    slug="scaling_fit",
    title="Scaling-law fit and the buffer-sizing rule",
    description=(
        "Train a grid of unique-pool sizes U × replay factors R, fit L = E + A/N^α + B/D′^β with the effective data "
        "D′ = U + U·R*(1 − e^{−(R−1)/R*}) (Huber on log L, L-BFGS), and size the buffer for a target budget.\n"
        "Reports R* with a bootstrap CI and the recommended storage reduction T/U at tolerance x."
    ),
    compute="compute.sae_replay.run:scaling_fit",
    params=[
        *_source_params(),
        IntList("u_log2_list", [10, 11, 12, 13, 14], min=7, max=20, min_len=1, max_len=10, label="log2 unique rows U"),
        IntList("r_list", [1, 2, 4, 8, 16], min=1, max=256, min_len=1, max_len=10, label="replay factors R"),
        IntList("m_list", [], min=32, max=16384, min_len=0, max_len=5, label="dictionary sizes (empty: m only)"),
        Int("target_t_log2", 20, min=12, max=40, label="log2 target budget T for the rule"),
        Float("tolerance", 0.01, min=0.0, max=0.5, label="tolerance x (relative loss)"),
        Int("n_boot", 40, min=0, max=1000, label="bootstrap resamples"),
    ],
    presets={
        "smoke": {
            "u_log2_list": [9, 10],
            "r_list": [1, 2, 4],
            "m": 64,
            "d": 16,
            "n_feat": 64,
            "n_hier": 2,
            "batch": 256,
            "n_eval_log2": 10,
            "n_boot": 3,
            "target_t_log2": 14,
        },
        "paper headline": {"u_log2_list": [12, 13, 14, 15, 16], "r_list": [1, 2, 4, 8, 16], "target_t_log2": 22},
        # grids that bracket the knee in R (docs §4.3b): small pools replayed up to 256 times, and pools to 2^15
        "knee bracket": {"u_log2_list": [10, 11, 12], "r_list": [1, 4, 16, 64, 256], "target_t_log2": 20},
        "wide pools": {"u_log2_list": [11, 13, 15], "r_list": [1, 4, 16, 64], "target_t_log2": 20},
        "dictionary axis": {"u_log2_list": [10, 12, 14], "r_list": [1, 4, 16], "m_list": [128, 256, 512]},
    },
    panels=[
        Figure("Held-out loss (nMSE) over U × R", key="heatmap", width=6),
        Figure("Fitted surface vs runs", key="fit", width=6),
        Figure("Fit residuals log(observed/fitted)", key="residuals", width=4),
        Line(
            "Iso-loss storage frontier: smallest U within tolerance",
            keys=["frontier/U_min"],
            x_label="budget T",
            y_label="U",
            x_log=True,
            y_log=True,
            width=4,
        ),
        Line(
            "Recommended storage reduction T/U",
            keys=["frontier/storage_reduction"],
            x_label="budget T",
            x_log=True,
            y_log=True,
            width=4,
        ),
        Line("Predicted loss vs R at the target T", keys=["predicted/nmse_vs_R"], x_label="R", x_log=True, width=4),
        Line("Held-out nMSE by run", keys=["grid/*"], x_label="U", x_log=True, y_log=True, mode="markers", width=6),
        Table("Fit, R* (95 % CI) and recommendation", key="fit", width=6),
        Table("Runs, fit and residuals", key="runs", width=12),
    ],
    cost_seconds=150,
    soft_time_limit=3000,
    time_limit=3300,
    check=_check_scaling,
)


def _check_r_list(p: dict[str, Any]) -> dict[str, str] | None:
    """Robustness and interpretability: every R divides T and leaves at least one batch of unique rows."""
    err = _check_common(p)
    if err:
        return err
    T = 1 << p["t_log2"]
    if any(T // r < p["batch"] or T % r for r in p["r_list"]):
        return {"r_list": "replay factors must be powers of two with T/R ≥ batch"}
    return None


ROBUST = Experiment(
    slug="robustness",
    title="Architecture and layer robustness of the rule",
    description=(
        "ΔEV (replay − fresh) for TopK, BatchTopK and JumpReLU (λ calibrated to L0 ≈ k within 10 %) and, on "
        "MiniLM, several layers.\nEqual T, steps and L0 for both arms of every pair."
    ),
    compute="compute.sae_replay.run:robustness",
    params=[
        *_source_params(),
        IntList(
            "archs",
            [0, 1, 2],
            min=0,
            max=2,
            min_len=1,
            max_len=3,
            label="architectures (0 TopK, 1 BatchTopK, 2 JumpReLU)",
        ),
        IntList("layers", [3], min=1, max=5, min_len=1, max_len=5, label="MiniLM layers"),
        Int("t_log2", 17, min=12, max=24, label="log2 training tokens T"),
        IntList("r_list", [16], min=2, max=1024, min_len=1, max_len=4, label="replay factors R"),
        Float("tol_ev", 0.005, min=0.0, max=0.1, label="tolerance |ΔEV|"),
    ],
    presets={
        "smoke": {
            "t_log2": 12,
            "r_list": [2],
            "m": 64,
            "d": 16,
            "n_feat": 64,
            "n_hier": 2,
            "batch": 256,
            "n_eval_log2": 10,
            "n_evals": 1,
            "archs": [0, 1],
        },
        "paper headline": {"t_log2": 20, "r_list": [16]},
        "minilm layers": {
            "source": "minilm",
            "layers": [1, 3, 5],
            "m": 1536,
            "k": 16,
            "t_log2": 17,
            "r_list": [16],
            "lr": 3e-3,
        },
    },
    panels=[
        Bar("ΔEV (replay − fresh)", table="delta", x="group", y=["delta_ev"], width=6),
        Table("Pairs", key="delta", width=6),
        Line("Held-out EV vs tokens", keys=["ev/*"], x_label="tokens", width=12),
    ],
    cost_seconds=150,
    soft_time_limit=3000,
    time_limit=3300,
    check=_check_r_list,
)


INTERP = Experiment(
    slug="interpretability",
    title="Interpretability under replay: absorption, sparse probing, proxies",
    description=(
        "Feature absorption (exact, on synthetic hierarchies), sparse probing (top-k latents + logistic regression) "
        "and a detection-score PROXY for auto-interpretability, against R over seeds.\n"
        "MiniLM: BBC-topic and first-letter probing; the detection proxy explains a latent by the modal token of "
        "its top contexts."
    ),
    compute="compute.sae_replay.run:interpretability",
    params=[
        *_source_params(),
        Int("t_log2", 18, min=12, max=24, label="log2 training tokens T"),
        IntList("r_list", [1, 4, 16, 64], min=1, max=1024, min_len=1, max_len=8, label="replay factors R"),
        Int("n_seeds", 2, min=1, max=10, label="seeds"),
        Int("probe_k", 1, min=1, max=64, label="sparse-probe k"),
    ],
    presets={
        "smoke": {
            "t_log2": 12,
            "r_list": [1, 2],
            "m": 64,
            "d": 16,
            "n_feat": 64,
            "n_hier": 2,
            "batch": 256,
            "n_eval_log2": 10,
            "n_seeds": 1,
        },
        "paper headline": {"t_log2": 20, "r_list": [1, 4, 16, 64], "n_seeds": 2},
    },
    panels=[
        Line(
            "Interpretability metrics vs R", keys=["interp/*"], x_label="R", x_log=True, mode="lines+markers", width=6
        ),
        Table("Mean ± sd by R", key="by_R", width=6),
        Table("Per run", key="per_run", width=12),
    ],
    cost_seconds=150,
    soft_time_limit=3000,
    time_limit=3300,
    check=_check_r_list,
)

CACHE = Experiment(
    slug="cache_build",
    title="Build step: MiniLM activation cache over BBC News",
    description=(
        "Deduplicate the BBC articles, split held-out/train by document, run MiniLM-L6 once and store the residual "
        "stream of the requested layers as fp16 memmaps (special tokens dropped).\nThe MiniLM experiments run this "
        "on first use; running it here makes the build visible and reports its throughput and size."
    ),
    compute="compute.sae_replay.run:cache_build",
    params=[
        IntList("layers", [1, 3, 5], min=1, max=5, min_len=1, max_len=5, label="layers"),
        Int("cache_tokens_log2", 17, min=8, max=20, label="log2 training tokens"),
        Int("n_eval_log2", 14, min=8, max=16, label="log2 held-out tokens"),
    ],
    presets={
        "smoke": {"layers": [1], "cache_tokens_log2": 9, "n_eval_log2": 8},
        "paper headline": {"layers": [1, 3, 5], "cache_tokens_log2": 17, "n_eval_log2": 14},
    },
    panels=[Table("Cache", key="cache", width=12)],
    cost_seconds=300,
    soft_time_limit=3000,
    time_limit=3300,
)

EXPERIMENTS = [SWEEP, SCALING, ROBUST, INTERP, CACHE]

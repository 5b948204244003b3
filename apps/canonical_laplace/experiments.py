"""Declarations of the canonical_laplace paper and its three experiments (no Django, no compute imports)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from apps.lab.declare import Bar, Bool, Choice, Experiment, Figure, Float, Int, Line, Paper, Param, Scatter, Table

PAPER = Paper(
    slug="canonical_laplace",
    title="Scale-Invariant Empirical-Bayes Laplace Approximation for ReLU Networks",
    abstract=(
        "A post-hoc Bayesian procedure should not depend on how a function is parameterized, yet standard "
        "empirical-Bayes Laplace (isotropic prior, evidence-selected precision) gives different marginal "
        "likelihoods, prior precisions and linearized predictive uncertainties for functionally identical ReLU "
        "networks related by positive rescaling of hidden neurons.  γ-canonicalization fits an isotropic Laplace "
        "approximation at a canonical representative of each scale orbit and transports the prior back, giving a "
        "precision field that transforms with the curvature; the evidence and the linearized predictive become "
        "invariant for every γ ∈ [0, 1], and γ is selected jointly with the prior precision by marginal likelihood."
    ),
    arxiv="",
    authors=[],
    tags=["Laplace approximation", "marginal likelihood", "reparameterization invariance", "ReLU", "NeurIPS 2026"],
    notes=(
        "Only the abstract is public (OpenReview VCFiwg3qqU).  Faithful and exact: the rescaling orbit θ′ = Sθ, the "
        "laws J′ = JS⁻¹ and G′ = S⁻¹GS⁻¹, the laplace-torch evidence log p(D|θ) − ½[log det(G+P₀) − log det P₀ + "
        "θᵀP₀θ], the GLM predictive and the standard EB baselines (scalar λ and layer-wise λ_l, tuned on every "
        "representative).  DESIGN CHOICE (the paper's γ-parameterization is not public): the canonicalizer is "
        "c(θ) = D(θ)θ with D(Sθ) = D(θ)S⁻¹; family A (default) interpolates the input-normalized and "
        "output-normalized normal forms, D_γ = D⁽⁰⁾^{1−γ}D⁽¹⁾^γ; family B is ENorm's min-norm point (no γ).  The "
        "prior field is P₀(θ) = λD(θ)².  Curvature: full GGN (default) or full Hessian, float64.  Every "
        "representative's f, J, G, λ* and predictive are recomputed by autodiff: invariance is measured, not assumed."
    ),
)

DATASETS = [
    ("sinusoid", "1-D sinusoid regression (y = sin x + 0.3ε)"),
    ("moons", "two-moons classification"),
    ("tabular", "8-feature tabular regression (interactions)"),
]
HIDDEN = [
    ("50", "one hidden layer of 50"),
    ("16-16", "16-16"),
    ("32-32", "32-32"),
    ("16-16-16", "16-16-16"),
    ("64-64", "64-64"),
    ("128-128", "128-128 (GPU-sized)"),
]
D_IN = {"sinusoid": 1, "moons": 2, "tabular": 8}
D_OUT = {"sinusoid": 1, "moons": 2, "tabular": 1}


def _common() -> list[Param]:
    return [
        Choice("dataset", "sinusoid", choices=DATASETS, label="data set", group="Data"),
        Int("n_train", 150, min=20, max=2000, label="N (training points)", group="Data"),
        Float(
            "noise",
            0.3,
            min=0.01,
            max=1.0,
            label="data noise",
            help="sinusoid/tabular ε scale, moons noise",
            group="Data",
        ),
        Bool("gap", False, label="sinusoid: gap x ∈ [3, 5]", group="Data"),
        Choice(
            "hidden", "32-32", choices=HIDDEN, label="hidden widths", help="1-32-32-1 for the sinusoid", group="Network"
        ),
        Int("train_steps", 2000, min=200, max=20000, log=True, label="MAP training steps (Adam)", group="Network"),
        Float("lr", 1e-2, min=1e-4, max=0.1, log=True, label="Adam learning rate", group="Network"),
        Float("weight_decay", 1e-4, min=0.0, max=0.1, label="MAP weight decay", group="Network"),
        Float(
            "sigma",
            0.3,
            min=0.01,
            max=5.0,
            label="likelihood σ",
            help="same σ for every method (regression)",
            group="Laplace",
        ),
        Choice(
            "curvature",
            "ggn",
            choices=[("ggn", "full GGN"), ("hessian", "full Hessian (clamped ≥ 0)")],
            group="Laplace",
        ),
        Choice(
            "family",
            "A",
            choices=[("A", "A: γ-interpolated normal form"), ("B", "B: ENorm min-norm (no γ)")],
            label="canonicalizer family",
            group="Laplace",
        ),
    ]


def _n_params(params: dict[str, Any]) -> int:
    hs = [int(h) for h in params["hidden"].split("-")]
    widths = [D_IN[params["dataset"]], *hs, D_OUT[params["dataset"]]]
    return sum((a + 1) * b for a, b in pairwise(widths))


def _check(params: dict[str, Any]) -> dict[str, str] | None:
    errors = {}
    if params["curvature"] == "hessian" and _n_params(params) > 6000:
        errors["curvature"] = f"the full Hessian needs P ≤ 6000 parameters (this network has {_n_params(params)})"
    if params["gap"] and params["dataset"] != "sinusoid":
        errors["gap"] = "the gap applies to the sinusoid data set only"
    return errors or None


HEADLINE = {"dataset": "sinusoid", "hidden": "32-32", "n_train": 150, "sigma": 0.3, "train_steps": 2000}
SMOKE = {"hidden": "16-16", "n_train": 40, "train_steps": 200}

INVARIANCE = Experiment(
    slug="invariance",
    title="Invariance under function-preserving rescaling",
    description=(
        "Standard EB-Laplace (scalar and layer-wise λ) vs γ-canonical EB-Laplace on R rescalings of one MAP network.\n"
        "Each representative θ_r = S_rθ computes the same function; the evidence, λ*, the GLM predictive and the "
        "canonical point are recomputed at θ_r by autodiff.  Canonical values agree to float64 round-off for every γ; "
        "the standard ones do not."
    ),
    compute="compute.canonical_laplace.run:invariance",
    params=[
        *_common(),
        Int("n_rescalings", 8, min=2, max=32, label="R (random rescalings)", group="Orbit"),
        Float(
            "log10_scale_range",
            1.0,
            min=0.0,
            max=3.0,
            label="log₁₀ range of s",
            help="s = 10^U(±range): 1 gives s ∈ [0.1, 10]",
            group="Orbit",
        ),
        Bool(
            "select_gamma",
            True,
            label="select γ by evidence",
            help="joint (γ, λ) argmax; else use γ below",
            group="Laplace",
        ),
        Float("gamma", 0.5, min=0.0, max=1.0, label="γ (when not selected)", group="Laplace"),
        Bool("layerwise", True, label="include the layer-wise λ_l baseline", group="Laplace"),
        Int(
            "n_gamma", 11, min=2, max=41, label="γ grid size", help="every-γ sweep and selection grid", group="Laplace"
        ),
    ],
    presets={
        "smoke": {**SMOKE, "n_rescalings": 2, "n_gamma": 5},
        "paper headline": {**HEADLINE, "n_rescalings": 6, "log10_scale_range": 1.0},
        "two moons": {"dataset": "moons", "n_train": 300, "noise": 0.2, "hidden": "32-32"},
        "tabular": {"dataset": "tabular", "n_train": 300, "hidden": "32-32"},
        "ENorm family": {**HEADLINE, "family": "B", "n_rescalings": 6},
        "Hessian curvature": {**HEADLINE, "curvature": "hessian", "n_rescalings": 3, "layerwise": False},
        "large (GPU)": {"hidden": "128-128", "n_train": 1000, "train_steps": 5000, "n_rescalings": 8},
    },
    panels=[
        Scatter("log evidence per representative", keys=["logz/*"], x_label="representative", y_label="log Z"),
        Scatter(
            "selected λ* per representative",
            keys=["lambda/*"],
            x_label="representative",
            y_log=True,
            help="layer-wise: geometric mean of the λ_l",
        ),
        Scatter("predictive sd at the probe point (x = 10)", keys=["sd/*"], x_label="representative"),
        Scatter(
            "predictive sd at the left probe end (x = −2)", keys=["sd_left/*"], x_label="representative", y_log=True
        ),
        Figure("Predictive bands of all representatives", key="bands", width=12),
        Figure("log Z strip plot", key="strip"),
        Scatter("layer-wise λ_l per representative", keys=["lambda_layer/*"], x_label="representative", y_log=True),
        Table("Max deviation across representatives", key="deviation", width=12),
        Line(
            "Every γ: max relative deviation across the orbit",
            keys=["gamma_sweep/max_rel_dev_*"],
            x_label="γ",
            y_log=True,
            mode="lines+markers",
        ),
        Line("log Z(γ, λ*(γ)), trained representative", keys=["gamma_sweep/logz"], x_label="γ", mode="lines+markers"),
        Table("Every-γ invariance", key="per_gamma", width=12),
        Table("Per representative", key="representatives", width=12),
        Scatter("Orbit checks: max|f(Sθ)−f(θ)|, ‖c(Sθ)−c(θ)‖∞", keys=["orbit/*"], x_label="representative"),
        Line("MAP training loss", keys=["train/loss"], y_log=True),
    ],
    cost_seconds=90,
    soft_time_limit=1200,
    time_limit=1500,
    check=_check,
)

LANDSCAPE = Experiment(
    slug="landscape",
    title="(γ, λ) marginal-likelihood landscape",
    description=(
        "log Z(γ, λ) of γ-canonical Laplace on an 11 × 81 grid, on three representatives of one orbit.\n"
        "The three heatmaps are identical and share one argmax (γ*, λ*); the standard EB log Z(λ) curves of the "
        "same three networks differ."
    ),
    compute="compute.canonical_laplace.run:landscape",
    params=[
        *_common(),
        Int("n_gamma", 11, min=2, max=41, label="γ grid size", group="Grid"),
        Int("n_lambda", 81, min=5, max=401, label="λ grid size (log-spaced in [1e-4, 1e4])", group="Grid"),
        Float("log10_scale_range", 1.0, min=0.0, max=3.0, label="log₁₀ range of s", group="Orbit"),
    ],
    presets={
        "smoke": {**SMOKE, "n_gamma": 5, "n_lambda": 21},
        "paper headline": {**HEADLINE},
        "two moons": {"dataset": "moons", "n_train": 300, "noise": 0.2},
    },
    panels=[
        Figure("log Z(γ, λ), representative 0 (trained)", key="landscape/rep0", width=4),
        Figure("log Z(γ, λ), representative 1", key="landscape/rep1", width=4),
        Figure("log Z(γ, λ), representative 2", key="landscape/rep2", width=4),
        Line("λ slices of log Z (representative 0)", keys=["slice/*"], x_label="log10 λ", y_label="log Z"),
        Line("standard EB log Z(λ) per representative", keys=["standard/*"], x_label="log10 λ", y_label="log Z"),
        Table("argmax per representative", key="argmax", width=12),
        Line("MAP training loss", keys=["train/loss"], y_log=True),
    ],
    cost_seconds=40,
    check=_check,
)

HELDOUT = Experiment(
    slug="heldout",
    title="Held-out quality: NLL and calibration",
    description=(
        "Held-out NLL and calibration of MAP, standard EB (scalar, layer-wise), canonical γ = ½ and canonical γ*.\n"
        "In-range and out-of-range test sets; the 'spread' table shows how much each method's metrics move across "
        "functionally identical representatives.  No winner is claimed."
    ),
    compute="compute.canonical_laplace.run:heldout",
    params=[
        *_common(),
        Int("n_rescalings", 4, min=1, max=16, label="R (rescalings for the spread)", group="Orbit"),
        Float("log10_scale_range", 1.0, min=0.0, max=3.0, label="log₁₀ range of s", group="Orbit"),
        Int("n_test", 500, min=50, max=5000, label="test points per split", group="Data"),
        Bool("layerwise", True, label="include the layer-wise λ_l baseline", group="Laplace"),
    ],
    presets={
        "smoke": {**SMOKE, "n_rescalings": 1, "n_test": 100},
        "paper headline": {**HEADLINE},
        "two moons": {"dataset": "moons", "n_train": 300, "noise": 0.2},
        "tabular": {"dataset": "tabular", "n_train": 300},
    },
    panels=[
        Bar("Held-out NLL", table="metrics", x="method", y=["nll_in", "nll_out"]),
        Bar("Calibration error (ECE / interval calibration)", table="metrics", x="method", y=["ece_in", "ece_out"]),
        Table("Metrics (trained representative)", key="metrics", width=12),
        Table("Spread across representatives (max − min)", key="spread", width=12),
        Figure("Reliability", key="reliability", width=12),
        Line("MAP training loss", keys=["train/loss"], y_log=True),
    ],
    cost_seconds=60,
    check=_check,
)

EXPERIMENTS = [INVARIANCE, LANDSCAPE, HELDOUT]

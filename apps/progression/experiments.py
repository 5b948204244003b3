"""Declarations for progression (STEP): RUL / end state, latent compass, forecasting, phase separation."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import Bar, Bool, Choice, Experiment, Figure, Float, Histogram, Int, Line, Paper, Table

PAPER = Paper(
    slug="progression",
    title="STEP: interpretable representations of progressive time series with a prototype-anchored latent",
    abstract=(
        "A self-supervised encoder maps windows of a progressive multivariate series (degradation, task completion, "
        "slow neural drift) into a low-dimensional latent anchored by two fixed orthogonal prototypes, the initial "
        "state e1 and the end state e2. The angle of z in the (e1, e2) plane, the latent compass, is a "
        "human-readable progression indicator; the same latent supports remaining-useful-life estimation, multi-step "
        "forecasting and phase separation, and a linear regressor on the indicators is competitive with deep models."
    ),
    arxiv="2605.31061",
    tags=["time series", "prognostics", "remaining useful life", "contrastive learning", "interpretability"],
    notes=(
        "Implemented as released (LucasStill/STEP): encoder = flattened window -> Linear -> learned positional "
        "embedding -> 4-layer TransformerEncoder (d 32, 8 heads, GELU) -> MLP -> z; because the sequence has length 1 "
        "the 'transformer' is an MLP in effect (a per-cycle tokenisation is offered as an ablation). Loss = MSE recon "
        "+ alpha * cosine triplet (margin 1) + beta_t * MSE to the fixed prototypes (first / last 8 windows of each "
        "training unit), beta_t = max(beta * 0.95^epoch, 0.05); AdamW (1e-3, wd 0.01, betas 0.9/0.98), batch 256. "
        "The released code builds triplet groups from the RUL of the run-to-failure training units (>125, 75-125, "
        "30-75, <=30): the 'no proxy labels' claim of the abstract does not hold for it. The time-index ablation "
        "(groups from t/T) is a design choice that tests that claim. Data are generated offline (no C-MAPSS "
        "archive): a C-MAPSS-like turbofan generator (Saxena 2008 exponential wear), a numpy neural population with a "
        "line-attractor mode, a two-link reacher (numpy, or MuJoCo Reacher-v5 via gymnasium) and NASA progpy's centrifugal pump run to impeller-wear "
        "failure (optional package). Design choices: the compass uses one global offset theta0 "
        "and one global orientation sign; the Tr-STEP head is a 2-layer transformer over the last 30 (theta, r); "
        "test units are scored at their last window against min(RUL, 125)."
    ),
)

FD_CHOICES = [
    ("fd001", "FD001-like: 1 condition, 1 fault mode"),
    ("fd002", "FD002-like: 6 conditions, 1 fault mode"),
    ("fd003", "FD003-like: 1 condition, 2 fault modes (HPC, fan)"),
    ("fd004", "FD004-like: 6 conditions, 2 fault modes"),
    ("neural", "neural population with a line-attractor drift"),
    ("reacher", "two-link reacher task progress"),
    ("reacher_mujoco", "MuJoCo Reacher-v5 (gymnasium) task progress"),
    ("pump", "progpy centrifugal pump, impeller wear to failure"),
]


def _common(sources: list[Any], default_source: str = "fd001", n_units: int = 50, epochs: int = 20) -> list[Any]:
    """The STEP hyper-parameters every experiment shares (names mirror compute.progression.config.StepConfig).

    Defaults are scaled so a run takes about 1.5-2 CPU minutes (spec: 100 units, 30 epochs; paper: 200 epochs)."""
    return [
        Choice("source", default_source, choices=sources, label="data source", group="Data"),
        Int(
            "n_units",
            n_units,
            min=20,
            max=300,
            label="training units",
            help="run-to-failure units (as many test units)",
            group="Data",
        ),
        Int("window", 10, min=5, max=30, label="window w (cycles)", group="Data"),
        Int("z_dim", 4, min=2, max=32, label="latent size z_dim", group="STEP"),
        Int("epochs", epochs, min=1, max=200, label="epochs", help="spec default 30, paper 200", group="STEP"),
        Float("alpha", 1.0, min=0.0, max=5.0, label="triplet weight α", group="STEP"),
        Float(
            "beta",
            0.1,
            min=0.0,
            max=1.0,
            label="prototype weight β",
            help="β_t = max(β·0.95^epoch, 0.05); β = 0 switches the prototypes off",
            group="STEP",
        ),
        Choice(
            "grouping",
            "rul",
            choices=[("rul", "RUL groups (released code)"), ("time", "life-fraction groups t/T (label-free ablation)")],
            label="triplet grouping",
            group="STEP",
        ),
        Choice(
            "tokenisation",
            "flat",
            choices=[("flat", "flattened window, 1 token (as released)"), ("cycle", "one token per cycle (ablation)")],
            label="encoder tokens",
            group="STEP",
        ),
    ]


LOSS_PANEL = Line(
    "Loss components and β_t",
    keys=["loss/recon", "loss/triplet", "loss/proto", "loss/beta_t"],
    x_label="epoch",
    y_log=True,
)
SMOKE = {"n_units": 20, "epochs": 1}

EXPERIMENTS = [
    Experiment(
        slug="rul",
        title="End-state prediction: linear-on-compass vs deep baselines",
        description=(
            "RMSE and PHM08 score of LR-STEP (linear on θ, r) and Tr-STEP against a supervised MS-DCNN-like CNN, a "
            "linear model on raw windows and (optionally) AE / SoftCLT-like encoders with the same heads.\n"
            "Each test unit is scored at its last window; mean ± std over seeds. source = all FD runs the README table."
        ),
        compute="compute.progression.run:rul_end_state",
        params=[
            *_common([*FD_CHOICES, ("fd_all", "all four FD-like variants (README table)")]),
            Bool("baselines", True, label="MS-DCNN and raw-linear baselines", group="Baselines"),
            Bool("ssl_baselines", False, label="AE and SoftCLT-like baselines", group="Baselines"),
            Int("head_epochs", 10, min=1, max=100, label="epochs of the Tr heads and the CNN", group="Baselines"),
            Int("context", 30, min=1, max=60, label="Tr-STEP context (windows)", group="Baselines"),
            Int("n_seeds", 1, min=1, max=10, label="seeds", help="mean ± std over seeds seed, seed+1, …"),
        ],
        presets={
            "smoke": {**SMOKE, "head_epochs": 1},
            "spec scale: 100 units, 30 epochs": {"n_units": 100, "epochs": 30},
            "margin over seeds (CPU)": {"source": "fd001", "n_seeds": 3, "epochs": 20, "n_units": 60},
            "README table: FD001-FD004, z=4": {
                "source": "fd_all",
                "epochs": 200,
                "n_seeds": 3,
                "ssl_baselines": True,
                "head_epochs": 30,
            },
        },
        panels=[
            LOSS_PANEL,
            Line("LR-STEP test RMSE vs epoch", keys=["rmse_epoch/*"], x_label="epoch", y_label="RMSE (cycles)"),
            Bar("RMSE per method", table="rul_methods", x="label", y=["rmse"], width=6),
            Bar("PHM08 score per method", table="rul_methods", x="label", y=["phm_score"], y_log=True, width=6),
            Figure("Predicted vs true RUL", key="rul_scatter"),
            Table("Methods (mean ± std over seeds)", key="rul_methods"),
            Table("Beside the README (C-MAPSS) numbers", key="rul_vs_paper"),
        ],
        cost_seconds=100,
        soft_time_limit=3600,
        time_limit=3900,
    ),
    Experiment(
        slug="compass",
        title="Latent compass: θ tracks progression; ablations β = 0 and label-free grouping",
        description=(
            "Trains STEP and reads the compass θ = atan2(⟨z,e2⟩, ⟨z,e1⟩) − θ0 on 20 held-out run-to-failure units.\n"
            "Reports per-unit Spearman(θ, 1−h), start/end angles, monotonicity / trendability / prognosability, and "
            "the same for the other triplet grouping and for β = 0."
        ),
        compute="compute.progression.run:latent_compass",
        params=[
            *_common(FD_CHOICES, n_units=40, epochs=15),
            Bool("ablations", True, label="train the grouping and β = 0 ablations"),
        ],
        presets={
            "smoke": {**SMOKE, "ablations": False},
            "paper figure: compass on FD001-like": {"n_units": 100, "epochs": 60},
        },
        panels=[
            LOSS_PANEL,
            Figure("z trajectories on (e1, e2)", key="compass_trajectories"),
            Figure("θ(t) over ground-truth damage", key="compass_theta_time"),
            Histogram("Per-unit Spearman(θ, 1−h)", keys=["spearman/*"], x_label="Spearman"),
            Table("Indicator quality per variant", key="compass_quality"),
        ],
        cost_seconds=130,
        soft_time_limit=3600,
        time_limit=3900,
    ),
    Experiment(
        slug="forecasting",
        title="Multi-step forecasting of the compass: AR(p) on θ vs GRU on raw sensors",
        description=(
            "Forecasts θ at horizons 1..H on held-out units: iterated AR(p) on θ alone, a GRU fed the last 30 raw "
            "(scaled) sensor cycles, and persistence."
        ),
        compute="compute.progression.run:forecasting",
        params=[
            *_common(FD_CHOICES),
            Int("ar_order", 5, min=1, max=20, label="AR order p"),
            Int("max_horizon", 20, min=2, max=40, label="max horizon H"),
            Int("head_epochs", 10, min=1, max=100, label="GRU epochs"),
        ],
        presets={
            "smoke": {**SMOKE, "head_epochs": 1},
            "paper figure: horizons 1-20": {"n_units": 100, "epochs": 60, "head_epochs": 30},
        },
        panels=[
            Line("Forecast RMSE vs horizon", keys=["forecast/*"], x_label="horizon (cycles)", y_label="RMSE (deg)"),
            Table("Forecast errors", key="forecast_errors"),
            LOSS_PANEL,
            Line("GRU training loss", keys=["forecast_train/gru_mse"], x_label="epoch", y_log=True),
        ],
        cost_seconds=100,
        soft_time_limit=3600,
        time_limit=3900,
    ),
    Experiment(
        slug="phases",
        title="Phase / mode separation: k-means on (θ, r)",
        description=(
            "k-means on the standardised (θ, r) of held-out windows for k = 2..k_max; ARI and NMI against life-phase "
            "quartiles, the fault mode (FD003/FD004-like) and the operating condition (FD002/FD004-like)."
        ),
        compute="compute.progression.run:phase_separation",
        params=[*_common(FD_CHOICES, "fd003"), Int("k_max", 8, min=2, max=8, label="largest k")],
        presets={"smoke": {**SMOKE, "k_max": 4}, "paper figure: FD003-like modes": {"n_units": 100, "epochs": 60}},
        panels=[
            Line("ARI vs k", keys=["phase/ari_*"], x_label="k", mode="lines+markers"),
            Line("NMI vs k", keys=["phase/nmi_*"], x_label="k", mode="lines+markers"),
            Figure("(θ, r) by k-means cluster (k = 4)", key="phase_clusters"),
            Figure("(θ, r) by life quartile", key="phase_truth_life"),
            Table("Scores per k", key="phase_scores"),
            LOSS_PANEL,
        ],
        cost_seconds=80,
        soft_time_limit=3600,
        time_limit=3900,
    ),
]

"""Declarations for toptwo_bai: β-EB-TCI best-arm identification in Bernoulli bandits (declarations only)."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import (
    Bar,
    Bool,
    Choice,
    Experiment,
    Figure,
    Float,
    FloatList,
    Histogram,
    Int,
    Line,
    Paper,
    Scatter,
    Table,
)

PAPER = Paper(
    slug="toptwo_bai",
    title="Sharp non-asymptotic analysis of the penalized challenger in β-EB-TCI for Bernoulli bandits",
    abstract=(
        "Fixed-confidence best-arm identification with the top-two rule β-EB-TCI of Jourdan et al. (2022): the leader "
        "is the empirical best arm, the challenger minimizes the GLR transportation cost plus a log-count penalty, and "
        "the leader is pulled with probability β. Once the leader is the true best arm and its sampling fraction stays "
        "close to β, the stopping time is T*_β(μ)·log(1/δ) up to lower-order terms, and every challenger is sampled "
        "linearly often; a forced-exploration rule costing O(√(Kt)) pulls gives an expected-sample-complexity theorem "
        "for any K."
    ),
    arxiv="2610.01951",
    authors=["Nam Nguyen", "Tuan Quang Dam"],
    tags=["bandits", "best-arm identification", "top-two", "fixed confidence", "sample complexity"],
    notes=(
        "Implemented: β-EB-TCI (randomized or tracking leader/challenger selection), EB-TC, forced exploration "
        "(pull argmin N_i when min N_i < √(t/K), ≤ √(Kt)+K pulls), uniform sampling, Track-and-Stop (D-tracking of "
        "w*(μ̂) recomputed every 50 steps), GLR stopping with the heuristic threshold log((1+log t)/δ) or GK16's "
        "δ-correct log(2t(K−1)/δ), evaluated at t = samples collected so far. T*(μ), T*_β(μ) and the optimal "
        "allocations are solved numerically (they reproduce GK16's published w*). The paper's own threshold and "
        "forced-exploration rule are not stated in its abstract: the ones used here are design choices. One "
        "trajectory per run serves a whole δ grid (the sampling rule does not depend on δ)."
    ),
)

INSTANCE_CHOICES = [
    ("gk16_mu1", "GK16 μ1 = (0.5, 0.45, 0.43, 0.40)"),
    ("gk16_mu2", "GK16 μ2 = (0.3, 0.21, 0.2, 0.19, 0.18)"),
    ("equal_sub", "equal suboptimal means (0.5, 0.4, 0.4, 0.4)"),
    ("near_tie", "near tie (0.5, 0.48, 0.3, 0.2)"),
    ("random", "random: K uniform means, gap ≥ 0.05"),
    ("custom", "custom: the arm means below"),
]
EASY = {"instance": "custom", "arm_means": [0.7, 0.5, 0.4, 0.3]}  # smoke presets: T*_½ ≈ 63


def _instance(name: str = "instance", default: str = "gk16_mu1") -> Choice:
    return Choice(name, default, choices=INSTANCE_CHOICES, label="instance", group="Instance")


def _common(n_runs: tuple[int, int, int], stopping: bool = True) -> list[Any]:
    """The parameters every experiment shares: instance, sampling rule, stopping rule, runs."""
    lo, default, hi = n_runs
    params: list[Any] = [
        _instance(),
        FloatList(
            "arm_means",
            [0.5, 0.45, 0.43, 0.40],
            min=0.0,
            max=1.0,
            min_len=2,
            max_len=20,
            label="arm means μ",
            help="Bernoulli means, used when instance = custom; the best must be unique",
            group="Instance",
        ),
        Int("n_arms", 5, min=2, max=20, label="K (random instances)", group="Instance"),
        Float(
            "beta",
            0.5,
            min=0.05,
            max=0.95,
            label="leader probability β",
            group="Sampling",
            help="the leader B_t is pulled with probability β (randomized) or a fraction β of its rounds (tracking)",
        ),
        Choice(
            "selection",
            "randomized",
            choices=[
                ("randomized", "randomized (Jourdan et al. 2022)"),
                ("tracking", "tracking (Jourdan & Degenne 2022)"),
            ],
            label="leader/challenger selection",
            group="Sampling",
        ),
        Choice(
            "challenger",
            "tci",
            choices=[("tci", "TCI: argmin W(B,j) + log N_j"), ("tc", "TC: argmin W(B,j) (no penalty)")],
            label="challenger",
            group="Sampling",
        ),
        Bool(
            "forced_exploration",
            False,
            label="forced exploration",
            help="pull the least-sampled arm whenever min N_i < √(t/K) (at most √(Kt)+K pulls)",
            group="Sampling",
        ),
        Int("n_runs", default, min=lo, max=hi, label="runs R", help="independent runs simulated in lock-step"),
    ]
    if stopping:
        params += [
            Choice(
                "threshold",
                "heuristic",
                choices=[
                    ("heuristic", "log((1 + log t)/δ) (heuristic)"),
                    ("gk16", "log(2t(K−1)/δ) (GK16 Thm 10, δ-correct)"),
                ],
                label="stopping threshold c(t, δ)",
                group="Stopping",
            ),
            Int(
                "t_max",
                1_000_000,
                min=1_000,
                max=10_000_000,
                log=True,
                label="t_max",
                help="runs still going at t_max are censored and reported separately",
                group="Stopping",
            ),
        ]
    return params


def _check(params: dict[str, Any]) -> dict[str, str] | None:
    errors: dict[str, str] = {}
    for name in ("instance", "second_instance"):
        if params.get(name) == "custom":
            means = params.get("arm_means") or []
            if sum(1 for m in means if m == max(means)) > 1:
                errors["arm_means"] = f"the best arm must be unique (the largest mean {max(means):g} is repeated)"
    if "tracked_run" in params and params["tracked_run"] >= params.get("n_runs", 1):
        errors["tracked_run"] = f"must be below the number of runs ({params['n_runs']})"
    return errors or None


DELTA = Float("delta", 0.01, min=1e-10, max=0.2, log=True, label="confidence δ", group="Stopping")

LIVE = Experiment(
    slug="live_run",
    title="Live run: β-EB-TCI on one instance",
    description=(
        "R runs of β-EB-TCI in lock-step, streamed: N_i(t)/t of one run against w_β, Z_t against c(t, δ), the leader, "
        "the challengers and the stopping times as runs finish.\n"
        "The dashboard updates every `report_every` steps."
    ),
    compute="compute.toptwo_bai.run:live_run",
    params=[
        *_common((1, 100, 1000)),
        DELTA,
        Int("report_every", 300, min=50, max=5000, label="steps between updates", group="Display"),
        Int("tracked_run", 0, min=0, max=999, label="plotted run", group="Display"),
    ],
    presets={
        "smoke": {**EASY, "n_runs": 100, "delta": 1e-8, "report_every": 100},  # ~2 s, ~20 updates
        "paper headline": {"instance": "gk16_mu1", "beta": 0.5, "delta": 0.01, "n_runs": 300},
        "tracking": {"instance": "gk16_mu1", "selection": "tracking", "delta": 0.01, "n_runs": 100},
        "equal suboptimal means + forced exploration": {"instance": "equal_sub", "forced_exploration": True},
    },
    panels=[
        Line(
            "N_i(t)/t of the plotted run vs w_β",
            keys=["alloc/*", "target/*"],
            x_label="t",
            y_label="N_i(t)/t",
            x_log=True,
        ),
        Line("Z_t vs c(t, δ) (plotted run)", keys=["stat/Z", "stat/threshold"], x_label="t", x_log=True, y_log=True),
        Scatter("Leader B_t (plotted run)", keys=["leader/arm"], x_label="t", y_label="arm"),
        Bar("Challenger pulls, all runs", table="challengers", x="arm", y=["share", "w_β share"]),
        Line("Runs stopped and empirical error", keys=["runs/stopped_fraction", "runs/error_rate"], x_label="t"),
        Figure("Stopping-time ECDF", key="tau_ecdf"),
        Histogram("Stopping times", keys=["stop/tau"], x_label="τ"),
        Table("Instance and allocations", key="instance", width=6),
        Table("Summary", key="summary"),
    ],
    cost_seconds=20,
    check=_check,
)

STOPPING = Experiment(
    slug="stopping_time",
    title="τ versus log(1/δ): the sharp leading term T*_β(μ)·log(1/δ)",
    description=(
        "E[τ] with its 95% CI and 10/50/90% quantiles against log(1/δ), next to T*_β·log(1/δ) and T*·log(1/δ); the "
        "ratio E[τ]/(T*_β log(1/δ)) should decrease towards 1; empirical error rate with a Clopper–Pearson band.\n"
        "One trajectory per run serves every δ of the grid (the sampling rule does not depend on δ)."
    ),
    compute="compute.toptwo_bai.run:stopping_time",
    params=[
        *_common((10, 200, 1000)),
        FloatList(
            "deltas",
            [1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8],
            min=1e-10,
            max=0.2,
            min_len=1,
            max_len=10,
            label="δ grid",
            group="Stopping",
        ),
        Float(
            "slope_max_delta",
            1e-4,
            min=1e-10,
            max=0.2,
            log=True,
            label="slope fit on δ ≤",
            help="E[τ] is regressed on log(1/δ) over these δ",
            group="Stopping",
        ),
    ],
    presets={
        "smoke": {**EASY, "n_runs": 20, "deltas": [0.1, 0.01, 1e-4]},
        "paper headline": {
            "instance": "gk16_mu1",
            "beta": 0.5,
            "challenger": "tci",
            "selection": "randomized",
            "threshold": "heuristic",
            "n_runs": 200,
        },
        "sharp leading term (R = 300)": {"instance": "gk16_mu1", "n_runs": 300},
        "GK16 δ-correct threshold": {
            "instance": "gk16_mu1",
            "threshold": "gk16",
            "n_runs": 300,
            "deltas": [0.2, 0.1, 0.01, 1e-4],
        },
        "GK16 μ2": {"instance": "gk16_mu2", "n_runs": 200},
    },
    panels=[
        Line(
            "E[τ] and quantiles vs log(1/δ)",
            keys=["tau/*", "ref/T_star_beta_log", "ref/T_star_log"],
            x_label="log(1/δ)",
            y_label="τ",
            mode="lines+markers",
            width=12,
        ),
        Line("E[τ] / (T*_β log(1/δ))", keys=["ratio/mean", "ratio/median"], x_label="log(1/δ)", mode="lines+markers"),
        Line(
            "Empirical error rate (Clopper–Pearson 95%) vs δ",
            keys=["error/*"],
            x_label="log(1/δ)",
            mode="lines+markers",
            y_log=True,
        ),
        Figure("ECDF of τ per δ", key="tau_ecdf"),
        Table("Instance and allocations", key="instance", width=6),
        Table("Per δ", key="summary"),
    ],
    cost_seconds=60,
    check=_check,
)

COMPARISON = Experiment(
    slug="sampler_comparison",
    title="Sampler comparison at one δ",
    description=(
        "β-EB-TCI against EB-TC (no penalty), EB-TCI with forced exploration, EB-TCI with tracking, EB-TCI at the "
        "oracle β*, uniform sampling and Track-and-Stop, with the same stopping rule: τ box plots, ECDFs, error rates "
        "and E[τ]/(T* log(1/δ))."
    ),
    compute="compute.toptwo_bai.run:sampler_comparison",
    params=[
        *_common((10, 100, 1000)),
        Float("delta", 0.1, min=1e-10, max=0.2, log=True, label="confidence δ", group="Stopping"),
        Bool("include_track_and_stop", True, label="include Track-and-Stop", help="several times slower"),
        Int("tas_every", 50, min=1, max=1000, label="Track-and-Stop: recompute w*(μ̂) every"),
    ],
    presets={
        "smoke": {**EASY, "n_runs": 10},
        "paper headline": {"instance": "gk16_mu1", "delta": 0.1, "n_runs": 300},
        "GK16 μ1, δ = 0.01": {"instance": "gk16_mu1", "delta": 0.01, "n_runs": 100},
        "equal suboptimal means": {"instance": "equal_sub", "delta": 0.01, "n_runs": 100},
    },
    panels=[
        Figure("τ per sampler", key="tau_box"),
        Figure("ECDF of τ", key="tau_ecdf"),
        Bar("E[τ] / (T* log(1/δ))", table="samplers", x="sampler", y=["E[τ]/(T* log 1/δ)"]),
        Bar("Empirical error rate", table="samplers", x="sampler", y=["error rate"]),
        Table("Samplers", key="samplers"),
        Table("Instance and allocations", key="instance"),
    ],
    cost_seconds=120,
    check=_check,
)

DIAGNOSTICS = Experiment(
    slug="diagnostics",
    title="Leader and challenger diagnostics (no stopping)",
    description=(
        "The sampling rule runs to a horizon: N(t)/t against w_β, ‖N(t)/t − w_β‖₁ on log-log axes, min_j N_j(t)/t, "
        "the fraction of runs whose leader is correct, T_lead (the last time the leader was wrong) and the pulls of "
        "every challenger (the 'linearly often' claim)."
    ),
    compute="compute.toptwo_bai.run:diagnostics",
    params=[
        *_common((1, 100, 1000), stopping=False),
        Int("horizon", 20_000, min=100, max=2_000_000, log=True, label="horizon T"),
    ],
    presets={
        "smoke": {**EASY, "n_runs": 20, "horizon": 1000},
        "paper headline": {"instance": "gk16_mu1", "n_runs": 100, "horizon": 100_000},
        "tracking": {"instance": "gk16_mu1", "selection": "tracking", "n_runs": 100, "horizon": 50_000},
        "equal suboptimal means": {"instance": "equal_sub", "n_runs": 100, "horizon": 50_000},
    },
    panels=[
        Line("Mean N_i(t)/t vs w_β", keys=["alloc/*", "target/*"], x_label="t", x_log=True),
        Line("‖N(t)/t − w_β‖₁", keys=["dist/*"], x_label="t", x_log=True, y_log=True),
        Line("min_j≠i* N_j(t)/t", keys=["minprop/*"], x_label="t", x_log=True),
        Line("Runs whose leader is the best arm", keys=["leader/correct_fraction"], x_label="t", x_log=True),
        Histogram("T_lead: last time the leader was wrong", keys=["lead/T_lead"], x_label="t"),
        Figure("ECDF of T_lead", key="t_lead_ecdf"),
        Bar(
            "Challenger pulls vs w_β,j/(1−β)",
            table="challengers",
            x="arm",
            y=["share of challenger pulls", "w_β,i/(1 − β)"],
        ),
        Table("Challengers", key="challengers"),
        Table("Summary", key="summary"),
    ],
    cost_seconds=60,
    check=_check,
)

FORCED = Experiment(
    slug="forced_exploration",
    title="With vs without forced exploration",
    description=(
        "β-EB-TCI with and without forced exploration on two instances (default GK16 μ1 and equal suboptimal "
        "means): τ, error rates, forced-pull counts against the budget √(Kt)+K and min_j N_j(t)/t."
    ),
    compute="compute.toptwo_bai.run:forced_exploration",
    params=[
        *[p for p in _common((10, 200, 1000)) if p.name != "forced_exploration"],
        _instance("second_instance", "equal_sub"),
        DELTA,
    ],
    presets={
        "smoke": {**EASY, "second_instance": "equal_sub", "n_runs": 10, "delta": 0.1},
        "paper headline": {"instance": "gk16_mu1", "second_instance": "equal_sub", "n_runs": 200, "delta": 0.01},
        "near tie": {"instance": "near_tie", "second_instance": "equal_sub", "n_runs": 100, "delta": 0.01},
    },
    panels=[
        Line("Forced pulls (max over runs) vs √(Kt)+K", keys=["forced/*"], x_label="t", x_log=True, y_log=True),
        Line("Median min_j N_j(t)/t", keys=["minprop/*"], x_label="t", x_log=True),
        Figure("ECDF of τ", key="tau_ecdf"),
        Table("With vs without", key="comparison"),
    ],
    cost_seconds=60,
    check=_check,
)

EXPERIMENTS = [LIVE, STOPPING, COMPARISON, DIAGNOSTICS, FORCED]

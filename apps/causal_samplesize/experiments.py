"""Declarations for the causal_samplesize paper: sample-size design for bounds on probabilities of causation."""

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
    IntList,
    Line,
    Paper,
    Table,
)

PAPER = Paper(
    slug="causal_samplesize",
    title="Sample-size design for bounds on probabilities of causation (PNS, PN, PS and multi-valued families)",
    abstract=(
        "Probabilities of causation are only partially identified: their sharp bounds combine experimental and "
        "observational probabilities as finite minima/maxima of smooth functions. Endpoint-specific sample-size "
        "formulas use the joint covariance of the estimates: a distribution-free rule for affine bounds and a "
        "pilot-based plug-in rule with safety guarantees for ratio-type bounds; simulations check precision and "
        "coverage."
    ),
    arxiv="",
    authors=["(NeurIPS 2026; text not located — closest public text: Cheng, Mao, Pearl & Li, arXiv 2602.17070)"],
    tags=["causality", "probabilities of causation", "sample size", "partial identification", "delta method"],
    notes=(
        "Implemented: Tian–Pearl PNS/PN/PS bounds as term tables; sharp LP bounds for |X|,|Y| ≤ 3 families with HiGHS "
        "duals as gradients; binomial arms + full multinomial observational covariance; distribution-free (Popoviciu) "
        "rule; active-term and pilot plug-in delta rules; safe pilot rule (Clopper–Pearson box); naive delta, "
        "directional delta, percentile and m-out-of-n bootstrap CIs. The Li–Mao–Pearl (2022) baseline formula is NOT "
        "implemented (paper text unavailable here); it is shown as 'not implemented'. A user may enter the baseline's "
        "design (n_e, n_o) read from that paper: the calculator then reports n_baseline/n_rule and the simulation "
        "measures attainment at it. n_e is per experimental arm unless 'total' is chosen."
    ),
)

CONFIDENCE = Choice("confidence", 0.95, choices=[(0.90, "90%"), (0.95, "95%"), (0.99, "99%")], label="confidence 1 − α")
EPS = Float("eps", 0.05, min=0.01, max=0.1, label="margin ε", help="target: P(|L̂ − L| ≤ ε) ≥ 1 − α")
SIDE = Choice(
    "side",
    "both",
    choices=[("lower", "lower endpoint"), ("upper", "upper endpoint"), ("both", "both (Bonferroni z_{1−α/4})")],
    label="endpoint",
)
RATIO = Float("ratio", 1.0, min=0.1, max=10.0, log=True, label="allocation n_o / n_e")
BASIS = Choice(
    "basis",
    "per_arm",
    choices=[("per_arm", "n_e per experimental arm"), ("total", "n_e = experimental total")],
    label="n_e counted",
    help="per arm vs total is a factor-2 difference; every table states n per arm, n_e total and n_o",
)
BASELINE_N_E = Int(
    "baseline_n_e",
    0,
    min=0,
    max=100_000_000,
    label="Li–Mao–Pearl 2022 n_e (read from the paper; 0 = not given)",
    help="the baseline's experimental size, counted as set in 'n_e counted'; binary PNS only. Never computed here.",
    group="baseline (user-entered)",
)
BASELINE_N_O = Int(
    "baseline_n_o",
    0,
    min=0,
    max=100_000_000,
    label="Li–Mao–Pearl 2022 n_o (read from the paper; 0 = not given)",
    group="baseline (user-entered)",
)


def _check_baseline(p: dict[str, Any], errors: dict[str, str]) -> None:
    if (p["baseline_n_e"] > 0) != (p["baseline_n_o"] > 0):
        key = "baseline_n_o" if p["baseline_n_e"] > 0 else "baseline_n_e"
        errors[key] = "enter both the baseline's n_e and n_o (or neither)"


ALPHA_P = Float(
    "alpha_p", 0.1, min=0.01, max=0.5, label="pilot box level α_p", help="safe rule covers the true n w.p. ≥ 1 − α_p"
)


def _check_calculator(p: dict[str, Any]) -> dict[str, str] | None:
    errors = {}
    th = p["planning"]
    if abs(sum(th[2:]) - 1) > 1e-6:
        errors["planning"] = f"o11 + o10 + o01 + o00 must sum to 1 (got {sum(th[2:]):.4f})"
    elif not (th[2] <= th[0] <= 1 - th[3] and th[4] <= th[1] <= 1 - th[5]):
        errors["planning"] = "incompatible with the observational cells: need o11 ≤ e1 ≤ 1 − o10 and o01 ≤ e0 ≤ 1 − o00"
    s1, m1, s0, m0, *obs = p["pilot"]
    if m1 < 1 or m0 < 1 or s1 > m1 or s0 > m0 or sum(obs) < 1:
        errors["pilot"] = "need 0 ≤ s1 ≤ m1, 0 ≤ s0 ≤ m0, m1, m0 ≥ 1 and a non-empty observational pilot"
    if p["family"] == "MULTI":
        if p["xa"] == p["xb"]:
            errors["xb"] = "x_b must differ from x_a"
        for k in ("xa", "xb"):
            if p[k] >= p["kx"]:
                errors[k] = f"must be below |X| = {p['kx']}"
        for k in ("ya", "yb"):
            if p[k] >= p["ky"]:
                errors[k] = f"must be below |Y| = {p['ky']}"
    _check_baseline(p, errors)
    return errors or None


def _check_simulation(p: dict[str, Any]) -> dict[str, str] | None:
    errors = {}
    if p["joint"] and len(p["joint"]) != 8:
        errors["joint"] = "give 8 cell probabilities over (X, Y_1, Y_0) or leave empty for random truths"
    elif p["joint"] and sum(p["joint"]) <= 0:
        errors["joint"] = "cell probabilities must have a positive sum"
    if 1.0 not in p["multipliers"]:
        errors["multipliers"] = "must include 1 (the rule's own n)"
    if (
        p["family"] != "PNS"
        and p["use_distribution_free"]
        and not any(p[k] for k in ("use_plugin_active", "use_plugin_pilot", "use_plugin_safe"))
    ):
        errors["use_distribution_free"] = (
            "PN/PS are ratio bounds: the distribution-free rule does not apply; pick a plug-in rule"
        )
    _check_baseline(p, errors)
    return errors or None


CALCULATOR = Experiment(
    slug="calculator",
    title="Sample-size calculator: required n per source for a PoC bound endpoint",
    description=(
        "Required experimental (per arm and total) and observational sizes for a PNS/PN/PS endpoint or a multi-valued "
        "family, under every rule, with the formula, the term-by-term variance table and the active term.\n"
        "Planning values θ = (e1, e0, o11, o10, o01, o00) drive the active-term plug-in; pilot counts "
        "(s1, m1, s0, m0, c11, c10, c01, c00) drive the naive and safe pilot rules."
    ),
    compute="compute.causal_samplesize.run:calculator",
    params=[
        Choice(
            "family", "PNS", choices=[("PNS", "PNS"), ("PN", "PN"), ("PS", "PS"), ("MULTI", "multi-valued family (LP)")]
        ),
        SIDE,
        EPS,
        CONFIDENCE,
        RATIO,
        BASIS,
        FloatList(
            "planning",
            [0.6, 0.35, 0.25, 0.25, 0.15, 0.35],
            min=0.0,
            max=1.0,
            min_len=6,
            max_len=6,
            label="planning values (e1, e0, o11, o10, o01, o00)",
        ),
        IntList(
            "pilot",
            [60, 100, 35, 100, 25, 25, 15, 35],
            min=0,
            max=10_000_000,
            min_len=8,
            max_len=8,
            label="pilot counts (s1, m1, s0, m0, c11, c10, c01, c00)",
        ),
        ALPHA_P,
        Int("kx", 3, min=2, max=3, label="|X|", group="multi-valued family"),
        Int("ky", 3, min=2, max=3, label="|Y|", group="multi-valued family"),
        Choice("query", "PNS", choices=["PNS", "PN", "PS"], label="query type", group="multi-valued family"),
        Int("xa", 1, min=0, max=2, label="x_a", group="multi-valued family"),
        Int("ya", 1, min=0, max=2, label="y_a", group="multi-valued family"),
        Int("xb", 0, min=0, max=2, label="x_b", group="multi-valued family"),
        Int("yb", 0, min=0, max=2, label="y_b", group="multi-valued family"),
        BASELINE_N_E,
        BASELINE_N_O,
    ],
    presets={
        "smoke": {"family": "PNS", "side": "both"},
        "paper headline": {"family": "PNS", "side": "both", "eps": 0.05, "confidence": 0.95},
        "PN ratio bound": {"family": "PN", "side": "lower", "planning": [0.6, 0.35, 0.25, 0.25, 0.15, 0.35]},
        "multi-valued 3x3": {"family": "MULTI", "kx": 3, "ky": 3, "query": "PNS"},
    },
    panels=[
        Bar("Required n per rule", table="required_n", x="rule", y=["n per arm", "n_e total", "n_o"]),
        Bar("Variance contribution per source (driving term)", table="variance_sources", x="source", y=["variance"]),
        Table("Designs and formulas", key="designs", width=12),
        Table("Term-by-term variances", key="terms", width=12),
        Table("Baseline (user-entered Li–Mao–Pearl design) vs each rule", key="baseline_ratio", width=12),
    ],
    cost_seconds=3,
    soft_time_limit=120,
    time_limit=180,
    check=_check_calculator,
)

SIMULATION = Experiment(
    slug="precision_coverage",
    title="Precision and coverage: attainment P(|L̂ − L| ≤ ε) and CI coverage vs n per rule",
    description=(
        "Random Dirichlet(1) truths over (X, Y_1, Y_0) or a user-given joint; each rule's n and 0.5×/2× of it; "
        "R replicates of binomial arms and multinomial observational data.\n"
        "Reports attainment (mean and minimum over truths), naive/directional delta coverage, bias, crossing and "
        "experimental/observational inconsistency. The Li–Mao–Pearl baseline formula is not implemented; with a "
        "user-entered baseline design (n_e, n_o) its attainment and n_baseline/n_rule are measured."
    ),
    compute="compute.causal_samplesize.run:precision_coverage",
    params=[
        Choice("family", "PNS", choices=["PNS", "PN", "PS"]),
        Choice("side", "upper", choices=SIDE.choices, label="endpoint"),
        EPS,
        CONFIDENCE,
        RATIO,
        BASIS,
        Int("n_truths", 20, min=1, max=200, label="random truths"),
        FloatList(
            "joint",
            [],
            min=0.0,
            max=1.0,
            min_len=0,
            max_len=8,
            label="user joint over (X, Y_1, Y_0) (8 cells, optional)",
        ),
        Int("reps", 1000, min=100, max=5000, label="replicates R"),
        Int("ci_reps", 400, min=50, max=5000, label="replicates used for the CIs (coverage)"),
        FloatList("multipliers", [0.5, 1.0, 2.0], min=0.25, max=4.0, min_len=1, max_len=6, label="n multipliers"),
        Bool("use_distribution_free", True, label="distribution-free rule"),
        Bool("use_plugin_active", True, label="active-term plug-in (truth as planning values)"),
        Bool("use_plugin_pilot", True, label="pilot plug-in (naive)"),
        Bool("use_plugin_safe", True, label="pilot plug-in (safe)"),
        Bool("use_baseline", True, label="Li–Mao–Pearl 2022 baseline"),
        Int("pilot_size", 200, min=20, max=10_000, label="pilot units per source"),
        ALPHA_P,
        Int("mc_draws", 256, min=64, max=4096, label="Gaussian draws (directional delta)"),
        BASELINE_N_E,
        BASELINE_N_O,
    ],
    presets={
        "smoke": {"n_truths": 2, "reps": 100, "ci_reps": 50, "pilot_size": 100, "mc_draws": 64},
        "paper headline": {
            "family": "PNS",
            "side": "upper",
            "eps": 0.05,
            "confidence": 0.95,
            "n_truths": 20,
            "reps": 1000,
        },
        "PNS both endpoints": {"family": "PNS", "side": "both", "n_truths": 20, "reps": 1000},
        "PN lower (ratio)": {"family": "PN", "side": "lower", "use_distribution_free": False, "n_truths": 20},
    },
    panels=[
        Figure("L̂ − L with ±ε (at each rule's n)", key="err_hist"),
        Histogram("L̂ − L, growing live", keys=["err/*"], x_label="L̂ − L"),
        Line(
            "Attainment vs n / n_rule (mean over truths)",
            keys=["attain/*"],
            x_label="n / n_rule",
            y_label="P(|L̂−L| ≤ ε)",
        ),
        Line("Minimum attainment over truths", keys=["attain_min/*", "attain/target"], x_label="n / n_rule"),
        Line("Coverage, directional delta CI", keys=["coverage_directional/*"], x_label="n / n_rule"),
        Line("Coverage, naive delta CI", keys=["coverage_naive/*"], x_label="n / n_rule"),
        Line("Coverage, conservative directional delta CI", keys=["coverage_conservative/*"], x_label="n / n_rule"),
        Line("Running minimum attainment at n_rule", keys=["running_min_attain/*"], x_label="truths done"),
        Table("Summary per rule and multiplier", key="summary", width=12),
        Table("Per truth (at n_rule)", key="per_truth", width=12),
        Table("Baseline (user-entered Li–Mao–Pearl design) vs each rule", key="baseline_ratio", width=12),
    ],
    cost_seconds=60,
    soft_time_limit=900,
    time_limit=1000,
    check=_check_simulation,
)

KINK = Experiment(
    slug="kink_stress",
    title="Kink stress test: CI coverage and bias of the max estimator when bound terms tie",
    description=(
        "PNS lower bound max{0, e1 − e0, P(y) − e0, e1 − P(y)} with two terms tied (pair) or all four at 0 (null), "
        "separated by a gap Δ.\nCoverage of naive delta, directional delta, percentile and m-out-of-n bootstrap CIs, and the bias "
        "of L̂ with Clark's (1961) closed form. 'Conservative' = union with each near-active term's delta interval."
    ),
    compute="compute.causal_samplesize.run:kink_stress",
    params=[
        Choice("tie", "pair", choices=[("pair", "e1 − e0 vs e1 − P(y)"), ("null", "null effect: four terms at 0")]),
        FloatList(
            "gaps",
            [0.0, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.07, 0.1],
            min=0.0,
            max=0.1,
            min_len=1,
            max_len=20,
            label="tie gaps Δ",
        ),
        Int("n", 500, min=50, max=100_000, log=True, label="n per arm = n_o"),
        Int("reps", 1000, min=100, max=5000, label="replicates R"),
        Int("boots", 200, min=50, max=2000, label="bootstrap resamples"),
        Float("gamma", 2 / 3, min=0.3, max=0.95, label="m-out-of-n exponent γ (m = n^γ)"),
        CONFIDENCE,
        Int("mc_draws", 300, min=64, max=4096, label="Gaussian draws (directional delta)"),
    ],
    presets={
        "smoke": {"gaps": [0.0, 0.05], "reps": 100, "boots": 50, "mc_draws": 64},
        "paper headline": {"tie": "pair", "reps": 2000, "boots": 300},
        "null-effect four-way tie": {"tie": "null", "reps": 2000, "boots": 300},
    },
    panels=[
        Line("Coverage vs tie gap Δ", keys=["coverage/*"], x_label="Δ", y_label="coverage", mode="lines+markers"),
        Line("Bias of the max estimator vs Δ", keys=["bias/*"], x_label="Δ", y_label="E[L̂] − L", mode="lines+markers"),
        Table("Kink results", key="kink", width=12),
    ],
    cost_seconds=10,
    soft_time_limit=600,
    time_limit=700,
)

RATIO_EXP = Experiment(
    slug="ratio_sensitivity",
    title="Ratio sensitivity: required n for the PN bound as P(x,y) → 0, naive vs safe pilot plug-in",
    description=(
        "PN lower endpoint (P(y) − e0)/P(x,y) with P(x,y) on a grid; the required n grows as P(x,y)^−2.\n"
        "Pilots of several sizes give naive and safe (Clopper–Pearson box) plug-in designs whose realized attainment "
        "is simulated."
    ),
    compute="compute.causal_samplesize.run:ratio_sensitivity",
    params=[
        FloatList(
            "p_xy",
            [0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5],
            min=0.01,
            max=0.5,
            min_len=1,
            max_len=20,
            label="P(x, y) grid",
        ),
        IntList(
            "pilot_sizes", [50, 100, 500], min=20, max=10_000, min_len=1, max_len=5, label="pilot sizes per source"
        ),
        Int("n_pilots", 20, min=2, max=200, label="pilots per point"),
        Int("reps", 400, min=100, max=5000, label="replicates R per design"),
        EPS,
        CONFIDENCE,
        ALPHA_P,
        Int("n_max", 2_000_000, min=1000, max=100_000_000, log=True, label="cap on simulated n"),
    ],
    presets={
        "smoke": {"p_xy": [0.1, 0.5], "pilot_sizes": [100], "n_pilots": 3, "reps": 100},
        "paper headline": {
            "p_xy": [0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5],
            "pilot_sizes": [50, 100, 500],
            "n_pilots": 40,
        },
    },
    panels=[
        Line(
            "Required n vs P(x,y) (log-log, slope −2)",
            keys=["n/*"],
            x_label="P(x,y)",
            y_label="n per source",
            x_log=True,
            y_log=True,
            mode="lines+markers",
        ),
        Line(
            "Realized attainment: naive vs safe", keys=["attain/*"], x_label="P(x,y)", x_log=True, mode="lines+markers"
        ),
        Table("Ratio sensitivity", key="ratio", width=12),
    ],
    cost_seconds=15,
    soft_time_limit=900,
    time_limit=1000,
)

EXPERIMENTS = [CALCULATOR, SIMULATION, KINK, RATIO_EXP]

"""Declarations for sregym: a live SRE-agent benchmark on a loopback microservice system (declarations only)."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import (
    Bool,
    Choice,
    Experiment,
    Figure,
    Float,
    FloatList,
    Int,
    IntList,
    Line,
    Paper,
    Scatter,
    Str,
    Table,
)

PAPER = Paper(
    slug="sregym",
    title="SREGym: A Live Benchmark for AI SRE Agents with High-Fidelity Failure Scenarios",
    abstract=(
        "SREGym is an interactive benchmark for site-reliability agents on live cloud-native stacks: fault injectors "
        "produce failures across the stack (processes, configuration, network, resources, data stores), ambient noise "
        "runs alongside, and metastable and correlated failures are included; a modular conductor orchestrates fault "
        "and noise injectors around Problems (app + fault + oracles). Frontier agents' end-to-end results vary by up "
        "to 40% across failure kinds."
    ),
    arxiv="2605.07161",
    authors=[
        "Yiming Su",
        "Saad Mohammad Rafid Pial",
        "Yifang Tian",
        "Lily Gniedziejko",
        "Hans-Arno Jacobsen",
        "Yinfang Chen",
        "Tianyin Xu",
    ],  # fmt: skip
    tags=["SRE", "AIOps", "agents", "benchmark", "fault injection", "metastable failures"],
    notes=(
        "SRE-Lite: no Kubernetes, Chaos Mesh or Docker. The live system is six real service processes on 127.0.0.1 "
        "(gateway, catalog, recommender, cart, checkout, payment) behind Toxiproxy-like sidecars, an SQLite data store, "
        "a desired-state supervisor (readiness probes, crash-loop back-off 1, 2, 4 … 30 s, versioned configs with "
        "rollback, scaling), an open-loop Poisson load generator and Prometheus-format metrics, JSON logs and "
        "traceparent spans kept in SQLite. 20 problems over process, misconfiguration, network, resource, data-store, "
        "metastable (retry storm) and concurrent/correlated faults, plus a no-fault control. Oracles: detection, "
        "AIOpsLab localisation score, structured diagnosis match, behavioural mitigation (SLO probes, goodput guard, "
        "stability pulse). Agents: a scripted heuristic baseline and an optional ReAct agent over any "
        "OpenAI-compatible endpoint the user configures (no hosted LLM by default). Each run executes in an isolated "
        "runner process group that is killed by PID when the run ends or is cancelled."
    ),
)

PROBLEMS = [
    "kill_payment", "stop_cart", "crashloop_checkout", "wrong_port_cart", "bad_password_catalog", "bad_deploy_payment",
    "latency_payment", "loss_catalog", "cpu_hog_recommender", "mem_leak_recommender", "pool_exhaustion_catalog",
    "disk_full_checkout", "row_lock_datastore", "kv_eviction_cart", "retry_storm_checkout", "retry_storm_catalog",
    "concurrent_password_latency", "concurrent_crashloop_loss", "correlated_lock_pool", "no_fault",
]  # fmt: skip
CATEGORIES = ["process", "misconfig", "network", "resource", "datastore", "metastable", "concurrent", "no-fault"]
NOISE = Choice("noise", "off", choices=[("off", "off"), ("low", "low: 1 experiment / 60 s"), ("high", "high: 2 experiments / 30 s")],
               label="ambient noise", help="SREGym's 2 × 120 s every 300 s, scaled down with the same duty ratio")  # fmt: skip
LLM = [
    Str("llm_base_url", "", max_length=200, pattern=r"(https?://\S+)?", label="LLM endpoint (OpenAI-compatible base URL)",
        help="e.g. http://127.0.0.1:8000/v1; empty = no LLM agent", group="LLM agent"),
    Str("llm_model", "gpt-4o-mini", max_length=100, label="model name", group="LLM agent"),
]  # fmt: skip


def _timing(baseline: float, settle: float, deadline: float | None = None) -> list[Any]:
    params: list[Any] = [
        Float("rate", 30.0, min=5.0, max=80.0, label="client load λ (rps)", group="Load"),
        Float("baseline_s", baseline, min=2.0, max=60.0, label="baseline capture (s)", group="Timers"),
        Float("settle_s", settle, min=1.0, max=30.0, label="injection → agent start (s)", group="Timers"),
        Float("probe_s", 5.0, min=1.0, max=15.0, label="SLO probe window (s)", group="Timers"),
    ]
    if deadline is not None:
        params.append(
            Float("deadline_s", deadline, min=10.0, max=120.0, label="mitigation deadline (s)", group="Timers")
        )
    return params


def _llm_check(params: dict[str, Any]) -> dict[str, str] | None:
    if "llm" in str(params.get("agent", params.get("agents", ""))) and not params.get("llm_base_url"):
        return {"llm_base_url": "the LLM agent needs an OpenAI-compatible endpoint"}
    return None


INCIDENT = Experiment(
    slug="single_incident",
    title="E1 — Single incident: inject, let an agent respond, judge",
    description=(
        "Deploy the shop, capture a baseline, start noise, inject the problem's fault, run the agent through "
        "detection → diagnosis → mitigation, then the oracles; recover and reconcile to the baseline.\n"
        "Live: per-service rps, error rate and p95 with markers for injection, noise and agent actions; the topology "
        "coloured by health; the agent transcript; verdicts with TTD/TTL/TTM. About 90 s."
    ),
    compute="compute.sregym.run:single_incident",
    params=[
        Choice("problem", "bad_password_catalog", choices=PROBLEMS, label="problem"),
        Choice(
            "agent", "scripted", choices=[("scripted", "scripted baseline"), ("llm", "LLM ReAct (needs an endpoint)")]
        ),
        NOISE,
        Int("max_steps", 20, min=5, max=50, label="max agent steps"),
        Bool("mitigation", True, label="run the mitigation oracle", help="off: detection and diagnosis only"),
        Float(
            "alert_s",
            0.0,
            min=0.0,
            max=120.0,
            label="alert-oracle window (s)",
            help="0 = skip; SREGym uses 120 s",
            group="Timers",
        ),
        *_timing(10.0, 6.0, 60.0),
        *LLM,
    ],
    presets={
        "smoke": {"problem": "bad_password_catalog", "mitigation": False, "baseline_s": 3, "settle_s": 3, "probe_s": 1},
        "paper headline": {"problem": "retry_storm_checkout", "alert_s": 30.0},
        "crash loop": {"problem": "crashloop_checkout"},
        "retry storm (metastable)": {"problem": "retry_storm_checkout"},
        "concurrent faults": {"problem": "concurrent_password_latency"},
        "no-fault control, high noise": {"problem": "no_fault", "noise": "high"},
    },
    panels=[
        Figure("Topology (coloured by health)", key="topology"),
        Table("Oracle verdicts, TTD/TTL/TTM", key="verdicts", width=6),
        Line("Error rate per service", keys=["err/*"], x_label="t (s)", y_label="errors / requests"),
        Line("p95 latency per service", keys=["p95/*"], x_label="t (s)", y_label="s"),
        Line("Requests per second", keys=["rps/*"], x_label="t (s)", y_label="rps"),
        Line("Client success and amplification", keys=["client/*"], x_label="t (s)"),
        Scatter(
            "Markers: injection, noise, agent actions", keys=["events/*"], x_label="t (s)", y_label="service index"
        ),
        Table("Agent transcript", key="transcript"),
    ],
    cost_seconds=90,
    soft_time_limit=900,
    time_limit=1000,
    check=_llm_check,
)

SWEEP = Experiment(
    slug="sweep",
    title="E2 — Sweep: problems × agents × seeds (success by failure kind)",
    description=(
        "Runs incidents one at a time and aggregates mitigation success by category: the category × agent heatmap "
        "is the analogue of the paper's 'up to 40% difference across failure kinds'; TTM box plots per category.\n"
        "The whole suite takes about 30–40 min in the background."
    ),
    compute="compute.sregym.run:sweep",
    params=[
        Choice(
            "problem_set",
            "metastable",
            choices=["suite", *CATEGORIES, *PROBLEMS],
            label="problems",
            help="the 20-problem suite, one category, or one problem",
        ),
        Choice("agents", "scripted", choices=[("scripted", "scripted"), ("llm", "LLM"), ("scripted+llm", "both")]),
        Int("n_seeds", 1, min=1, max=5, label="seeds"),
        NOISE,
        Int("max_steps", 20, min=5, max=50, label="max agent steps"),
        Bool("mitigation", True, label="run the mitigation oracle"),
        *_timing(10.0, 6.0, 60.0),
        *LLM,
    ],
    presets={
        "smoke": {"problem_set": "no_fault", "mitigation": False, "baseline_s": 3, "settle_s": 2, "probe_s": 1},
        "paper headline": {"problem_set": "suite", "agents": "scripted", "n_seeds": 2},
        "metastable vs crash": {"problem_set": "metastable", "n_seeds": 2},
    },
    panels=[
        Figure("Mitigation success: category × agent", key="heatmap"),
        Figure("TTM per category", key="ttm_box"),
        Table("Category aggregates", key="categories"),
        Table("Per-problem verdicts", key="verdicts"),
        Scatter("Mitigation success per run", keys=["mitigation/*"], x_label="run"),
    ],
    cost_seconds=160,
    soft_time_limit=3600,
    time_limit=3700,
    check=_llm_check,
)

METASTABLE = Experiment(
    slug="metastability",
    title="E3 — Metastability explorer: retries × load around λ(1+R) = μ",
    description=(
        "One service with c slots and service time S (μ = c/S) and an open-loop client with timeout T_o and R retries. "
        "A trigger adds latency for a few seconds; the system is metastable iff λ < μ < λ(1+R): with retries the "
        "collapse outlives the trigger, without it recovers.\n"
        "Phase diagram of goodput after the trigger is removed with the λ(1+R) = μ boundary; goodput and "
        "amplification over time. Four grid points take about 80 s."
    ),
    compute="compute.sregym.run:metastability",
    params=[
        IntList("retries", [0, 1], min=0, max=5, min_len=1, max_len=6, label="retries R (grid)"),
        FloatList("rates", [30.0, 60.0], min=5.0, max=150.0, min_len=1, max_len=6, label="load λ (rps, grid)"),
        Int("c", 4, min=1, max=16, label="slots c", group="Service"),
        Float("service_ms", 50.0, min=10.0, max=200.0, label="service time S (ms)", group="Service"),
        Int("queue_limit", 64, min=8, max=512, label="queue limit", group="Service"),
        Float("timeout_ms", 400.0, min=100.0, max=1000.0, label="client timeout T_o (ms)", group="Client"),
        Float("backoff_ms", 0.0, min=0.0, max=500.0, label="retry back-off base (ms)", group="Client"),
        Float("trigger_ms", 200.0, min=20.0, max=1000.0, label="trigger: extra service time (ms)", group="Trigger"),
        Float("trigger_s", 5.0, min=1.0, max=20.0, label="trigger duration (s)", group="Trigger"),
        Float("warmup_s", 3.0, min=1.0, max=10.0, label="warm-up (s)", group="Trigger"),
        Float("after_s", 12.0, min=3.0, max=30.0, label="observed after removal (s)", group="Trigger"),
    ],
    presets={
        "smoke": {"retries": [3], "rates": [50.0], "warmup_s": 1, "trigger_s": 2, "after_s": 3},
        "paper headline": {"retries": [0, 1, 2, 3], "rates": [25.0, 45.0, 65.0], "after_s": 15},
        "R = 3 vs R = 0 (key test)": {"retries": [0, 3], "rates": [50.0], "trigger_s": 10, "after_s": 15},
        "spec scale: c = 8, λ = 100": {
            "retries": [0, 3],
            "rates": [100.0],
            "c": 8,
            "timeout_ms": 300,
            "trigger_s": 10,
            "after_s": 15,
        },
        "back-off 100 ms": {"retries": [3], "rates": [30.0, 50.0], "backoff_ms": 100},
    },
    panels=[
        Figure("Phase diagram: goodput at the end (last 5 s), with λ(1+R) = μ", key="phase"),
        Line("Goodput per second", keys=["goodput/*"], x_label="t (s)", y_label="fraction succeeded"),
        Line("Amplification (attempts / requests)", keys=["amplification/*"], x_label="t (s)"),
        Table("Grid", key="grid"),
    ],
    cost_seconds=90,
    soft_time_limit=1800,
    time_limit=1900,
)

NOISE_EXP = Experiment(
    slug="noise_robustness",
    title="E4 — Noise robustness: false alarms and localisation vs noise",
    description=(
        "One fault under noise {off, low, high} plus no-fault controls, detection and diagnosis only: the scripted "
        "agent's detection false-positive rate on the controls and its localisation accuracy on the fault runs."
    ),
    compute="compute.sregym.run:noise_robustness",
    params=[
        Choice("problem", "bad_password_catalog", choices=[p for p in PROBLEMS if p != "no_fault"]),
        Choice(
            "levels",
            "off,high",
            choices=[("off,low,high", "off, low, high"), ("off", "off only"), ("off,high", "off, high")],
            label="noise levels",
        ),  # fmt: skip
        Int("n_seeds", 1, min=1, max=5, label="fault runs per level"),
        Int("n_controls", 1, min=1, max=10, label="no-fault controls per level"),
        *_timing(10.0, 6.0),
    ],
    presets={
        "smoke": {"levels": "off", "baseline_s": 2, "settle_s": 2, "probe_s": 1},
        "paper headline": {"levels": "off,low,high", "n_seeds": 3, "n_controls": 5},
    },
    panels=[
        Line(
            "Detection false-positive rate and localisation accuracy",
            keys=["noise/*"],
            x_label="noise level (0 off, 1 low, 2 high)",
        ),
        Table("Per noise level", key="noise"),
    ],
    cost_seconds=150,
    soft_time_limit=3600,
    time_limit=3700,
)

EXPERIMENTS = [INCIDENT, SWEEP, METASTABLE, NOISE_EXP]

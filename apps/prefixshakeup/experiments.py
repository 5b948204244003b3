"""Declarations of the prefixshakeup paper and its experiments (no Django, no compute imports)."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import (
    Bar,
    Choice,
    Experiment,
    Figure,
    Float,
    Int,
    IntList,
    Line,
    Paper,
    Scatter,
    Table,
)

PAPER = Paper(
    slug="prefixshakeup",
    title="PrefixShakeup: proactive prompt-prefix re-forming for offline LLM intent tagging",
    abstract=(
        "Offline LLM intent tagging packs each user's history records behind a shared instruction; prefix caching "
        "only reuses prefixes that happen to coincide.  PrefixShakeup re-forms prompts before inference: it "
        "reorders records so that prompts share long prefixes while tolerating a bounded number of discordant "
        "records, plans for the available KV capacity (Alleviator) with kernel-accelerated similarity scoring, and "
        "adapts incrementally to data changes (Adaptor).  Up to 2.1× throughput over state-of-the-art "
        "prefix-caching inference with controlled tagging accuracy."
    ),
    arxiv="",
    authors=[],
    tags=["LLM inference", "prefix caching", "KV cache", "batch inference", "NeurIPS 2026"],
    notes=(
        "DESIGN RECONSTRUCTION: only the abstract is known.  Built on GGR (Liu et al., MLSys 2025), BatchLLM, "
        "SGLang's RadixAttention/LPM scheduling and vLLM prefix caching.  A radix-cache simulator (leaf-only LRU, "
        "lock references, token capacity, optional 16-token blocks) drives all policies; the real engine is the "
        "compute/core tiny causal LM with explicit prefix-KV reuse, whose fitted cost model "
        "t = a·n_new + b·n_new·(n_ctx + n_new/2) + c drives the simulator.  Discordance: a prompt may adopt up to d "
        "foreign records of its group prefix; the accuracy cost is measured with a tagger trained on original-order "
        "prompts.  Planning time is always inside throughput.  See docs/papers/prefixshakeup.md."
    ),
)


def _workload(users: int = 300, records: int = 100, max_users: int = 2000) -> list:
    return [
        Int("users", users, min=10, max=max_users, log=True, label="users (prompts)", group="Workload"),
        Int("records_mean", records, min=10, max=300, label="records per user (mean)", group="Workload"),
        Int("templates", 2000, min=200, max=5000, log=True, label="record templates M", group="Workload"),
        Int("communities", 8, min=1, max=32, label="communities C", group="Workload"),
        Float("zipf_alpha", 1.1, min=0.8, max=1.5, label="Zipf α", group="Workload"),
        Int(
            "community_pool",
            200,
            min=50,
            max=5000,
            log=True,
            label="templates per community ranking",
            help="design choice: a community's own Zipf ranking covers this many templates",
            group="Workload",
        ),
        Float("omega", 1.0, min=0.0, max=4.0, label="order sensitivity ω of the label", group="Workload"),
    ]


def _check_capacity(p: dict[str, Any]) -> dict[str, str] | None:
    if p["users"] * p["records_mean"] > 300_000:
        return {"users": "users × records_mean above 300 000 would take minutes in the simulator"}
    return None


CAPACITY = Experiment(
    slug="capacity_sweep",
    title="Throughput vs KV capacity (radix-cache simulator)",
    description=(
        "Prefix hit rate, prompts/s, evictions and recomputed tokens per policy across KV capacities.\n"
        "Policies: no cache; radix cache with original order (baseline 2); LPM/lexicographic sorting (baseline 3, "
        "the state-of-the-art analogue); GGR lossless reordering (baseline 4); PrefixShakeup with d = 0 and d.  "
        "Throughput = prompts / (planning + Σ prefill), with the cost model fitted on the tiny LM."
    ),
    compute="compute.prefixshakeup.run:capacity_sweep",
    params=[
        *_workload(),
        IntList(
            "capacities",
            [2000, 8000, 32000, 0],
            min=0,
            max=1_000_000,
            min_len=1,
            max_len=8,
            label="KV capacities (tokens; 0 = ∞)",
            group="Cache",
        ),
        Int("d", 4, min=0, max=16, label="discordance bound d", group="PrefixShakeup"),
        Int("recency", 10, min=0, max=50, label="recency window m", group="PrefixShakeup"),
        Int("clusters", 0, min=0, max=64, label="clusters (0 = √(n/4))", group="PrefixShakeup"),
        Int("batch_size", 4, min=1, max=32, label="running batch (locked KV)", group="Cache"),
        Choice("page_size", 1, choices=[(1, "radix (token)"), (16, "16-token blocks (vLLM)")], group="Cache"),
        Float("cost_a", 1.2e-4, min=0.0, max=1e-2, label="a (s per new token)", group="Cost model"),
        Float("cost_b", 3.1e-8, min=0.0, max=1e-5, label="b (s per new×context token)", group="Cost model"),
        Float("cost_c", 1e-3, min=0.0, max=1.0, label="c (s per prompt)", group="Cost model"),
    ],
    presets={
        "smoke": {"users": 30, "records_mean": 20, "capacities": [1000, 0], "templates": 400},
        "paper headline": {"capacities": [8000], "d": 8},
        "strong overlap": {"zipf_alpha": 1.3, "community_pool": 150, "capacities": [2000, 8000, 0], "d": 8},
        "vLLM blocks": {"page_size": 16},
    },
    panels=[
        Line(
            "Prefix hit rate vs capacity",
            keys=["phr/*"],
            x_label="capacity (tokens; ∞ at the right)",
            y_label="PHR",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Line(
            "Prompts/s vs capacity",
            keys=["throughput/*"],
            x_label="capacity (tokens)",
            y_label="prompts/s",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Line(
            "Speedup over LPM sorting (baseline 3)",
            keys=["speedup_vs_lpm/*"],
            x_label="capacity (tokens)",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Line(
            "Speedup over original order (baseline 2)",
            keys=["speedup_vs_original/*"],
            x_label="capacity (tokens)",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Line(
            "Evicted tokens",
            keys=["evictions/*"],
            x_label="capacity (tokens)",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Line(
            "Recomputed tokens",
            keys=["recomputed/*"],
            x_label="capacity (tokens)",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Table("Headline (capacity 8k, or the smallest)", key="headline", width=12),
        Bar(
            "Speedups at the binding capacity",
            table="headline",
            x="policy",
            y=["× vs original order", "× vs LPM (SOTA analogue)"],
            width=6,
        ),
        Table("Bounds", key="bounds", width=6),
        Table("All policies and capacities", key="summary", width=12),
    ],
    cost_seconds=20,
    soft_time_limit=600,
    time_limit=700,
    check=_check_capacity,
)

TRADEOFF = Experiment(
    slug="accuracy_tradeoff",
    title="Accuracy–throughput trade-off over the discordance bound d and recency window m",
    description=(
        "Tagging accuracy (vs the rule label) and agreement (vs the tagger on the original order) against "
        "simulated prompts/s, for d ∈ d_list and m ∈ m_list.\n"
        "The tagger is the tiny LM read out over the intent-label tokens, trained once on original-order prompts "
        "(the build step runs first when its checkpoint is missing).  Predictions are served through the radix "
        "cache with prefix-KV reuse (identical logits to a full recompute)."
    ),
    compute="compute.prefixshakeup.run:tradeoff",
    params=[
        *_workload(users=120, records=24, max_users=1000),
        IntList("d_list", [0, 1, 2, 4, 8], min=0, max=16, min_len=1, max_len=8, label="d values"),
        IntList("m_list", [0, 10], min=0, max=50, min_len=1, max_len=6, label="recency windows m"),
        Choice(
            "variant",
            "foreign",
            choices=[("foreign", "foreign records as they are"), ("foreign+note", "foreign + '<ignore> …' note")],
        ),
        Int("capacity", 8000, min=500, max=1_000_000, log=True, label="KV capacity (tokens)"),
        Int("batch_size", 4, min=1, max=32),
        Choice("tagger_size", "small", choices=["micro", "small", "medium"], group="Tagger"),
        Int("tagger_steps", 0, min=0, max=5000, label="fine-tuning steps", group="Tagger"),
        Int("tagger_probe", 4096, min=64, max=20000, log=True, label="probe prompts", group="Tagger"),
        Float("cost_a", 1.2e-4, min=0.0, max=1e-2, group="Cost model"),
        Float("cost_b", 3.1e-8, min=0.0, max=1e-5, group="Cost model"),
        Float("cost_c", 1e-3, min=0.0, max=1.0, group="Cost model"),
    ],
    presets={
        "smoke": {
            "users": 12,
            "records_mean": 12,
            "templates": 300,
            "d_list": [0, 2],
            "m_list": [0],
            "tagger_size": "micro",
            "tagger_steps": 3,
            "tagger_probe": 64,
        },
        "paper headline": {"users": 300, "d_list": [0, 1, 2, 4, 8], "m_list": [0, 5, 10, 20]},
        "with notes": {"variant": "foreign+note"},
    },
    panels=[
        Scatter(
            "Accuracy vs prompts/s", keys=["accuracy/*"], x_label="prompts/s (simulated)", y_label="accuracy", width=6
        ),
        Scatter(
            "Agreement vs prompts/s",
            keys=["agreement/*"],
            x_label="prompts/s (simulated)",
            y_label="agreement",
            width=6,
        ),
        Figure("Pareto front (d = 0 starred)", key="pareto", width=6),
        Line("Foreign records per prompt vs d", keys=["foreign/*"], x_label="d", mode="lines+markers", width=3),
        Line("PHR vs d", keys=["phr_vs_d/*"], x_label="d", mode="lines+markers", width=3),
        Table("Trade-off", key="tradeoff", width=12),
    ],
    cost_seconds=120,
    soft_time_limit=1700,
    time_limit=1800,
)

INCREMENTAL = Experiment(
    slug="incremental_updates",
    title="Incremental updates: Adaptor vs full re-plan vs no update",
    description=(
        "Each round adds frac_users new users and frac_records·Σ|R| new records; PHR per round and re-planning "
        "CPU time.\nThe Adaptor appends new records to the suffix, sends new users to the nearest cluster prefix "
        "(Jaccard) and re-plans a cluster only when its hit rate drops by more than the threshold."
    ),
    compute="compute.prefixshakeup.run:incremental",
    params=[
        *_workload(),
        Int("rounds", 5, min=1, max=20),
        Float("frac_users", 0.1, min=0.0, max=1.0, label="new users per round (fraction)"),
        Float("frac_records", 0.1, min=0.0, max=1.0, label="new records per round (fraction)"),
        Float("threshold", 0.1, min=0.0, max=1.0, label="re-plan threshold (relative PHR drop)"),
        Int("d", 4, min=0, max=16, label="discordance bound d"),
        Int("recency", 10, min=0, max=50, label="recency window m"),
        Int("capacity", 8000, min=500, max=1_000_000, log=True, label="KV capacity (tokens)"),
        Int("batch_size", 4, min=1, max=32),
    ],
    presets={
        "smoke": {"users": 30, "records_mean": 20, "templates": 400, "rounds": 2},
        "paper headline": {"rounds": 5},
    },
    panels=[
        Line("PHR per round", keys=["phr/*"], x_label="round", y_label="PHR", mode="lines+markers", width=6),
        Line(
            "Re-planning CPU seconds",
            keys=["cpu/*"],
            x_label="round",
            y_label="s",
            mode="lines+markers",
            y_log=True,
            width=6,
        ),
        Table("Rounds", key="rounds", width=12),
    ],
    cost_seconds=30,
    soft_time_limit=900,
    time_limit=1000,
)

ENGINE = Experiment(
    slug="engine_validation",
    title="Engine validation: real tiny LM with prefix-KV reuse vs the simulator",
    description=(
        "Serves the same schedules on the compute/core tiny causal LM, reusing the matched prefix's KV.\n"
        "Median of repeats per prompt; the cost model is fitted on these timings (predicted vs measured scatter); "
        "measured and simulator-predicted speedups; max |Δlogit| between cached and fully recomputed prefills."
    ),
    compute="compute.prefixshakeup.run:engine_validation",
    params=[
        *_workload(users=100, records=60, max_users=600),
        Choice(
            "model",
            "spec",
            choices=[
                ("spec", "4 layers, d = 256 (random init)"),
                ("medium", "4 layers, d = 128 (random init)"),
                ("small", "2 layers, d = 64 (random init)"),
                ("tagger", "the trained tagger"),
            ],
        ),
        Int("d", 4, min=0, max=16, label="discordance bound d"),
        Int("recency", 10, min=0, max=50, label="recency window m"),
        Int("capacity", 8000, min=500, max=200_000, log=True, label="KV capacity (tokens)"),
        Int("repeats", 3, min=1, max=9),
        Int("check_prompts", 8, min=1, max=50, label="prompts per policy checked against a full recompute"),
        Int("threads", 1, min=1, max=16, label="torch threads", help="2 on an idle 2-core machine"),
    ],
    presets={
        "smoke": {
            "users": 10,
            "records_mean": 10,
            "templates": 300,
            "model": "small",
            "repeats": 1,
            "check_prompts": 2,
            "capacity": 1000,
        },
        "paper headline": {"users": 150, "records_mean": 100, "d": 8, "repeats": 3},
    },
    panels=[
        Scatter(
            "Measured vs predicted prefill seconds (x = predicted)",
            keys=["fit/*"],
            x_label="predicted s",
            y_label="measured s",
            width=6,
        ),
        Bar(
            "Prompts/s measured vs predicted",
            table="engine",
            x="policy",
            y=["prompts/s measured", "prompts/s predicted"],
            width=6,
        ),
        Table("Engine runs", key="engine", width=12),
        Table("Fitted cost model", key="cost_model", width=6),
        Line("max |Δlogit| cached vs recomputed", keys=["dlogit/*"], x_label="", mode="markers", width=6),
        Line("Measured prompts/s", keys=["throughput_measured/*"], mode="markers", width=6),
        Line("Predicted prompts/s", keys=["throughput_predicted/*"], mode="markers", width=6),
    ],
    threads=1,
    cost_seconds=120,
    soft_time_limit=1700,
    time_limit=1800,
)

PLANNING = Experiment(
    slug="planning_cost",
    title="Re-forming cost vs number of prompts",
    description=(
        "Seconds of each planning phase (sparse X·Xᵀ Jaccard, k-medoids, discordance-tolerant GGR, DFS sort) as "
        "the prompt count grows, next to the GGR baseline; the log-log slope shows the scaling."
    ),
    compute="compute.prefixshakeup.run:planning_cost",
    params=[
        *_workload(),
        IntList("users_list", [250, 500, 1000, 2000], min=10, max=20000, min_len=1, max_len=8, label="prompt counts"),
        Int("d", 4, min=0, max=16),
        Int("recency", 10, min=0, max=50),
    ],
    presets={
        "smoke": {"users_list": [20, 40], "records_mean": 20, "templates": 400},
        "paper headline": {"users_list": [250, 500, 1000, 2000, 4000]},
    },
    panels=[
        Line(
            "Planning phases (s)",
            keys=["plan/*"],
            x_label="prompts",
            y_label="s",
            x_log=True,
            y_log=True,
            mode="lines+markers",
            width=6,
        ),
        Line(
            "Total planning (s)",
            keys=["total/*"],
            x_label="prompts",
            y_label="s",
            x_log=True,
            y_log=True,
            mode="lines+markers",
            width=6,
        ),
        Table("Planning cost", key="planning", width=12),
    ],
    gpu=True,
    cost_seconds=60,
    soft_time_limit=1200,
    time_limit=1300,
)

BUILD = Experiment(
    slug="build_tagger",
    title="Build step: train the tagger on original-order prompts",
    description=(
        "Trains the tiny LM to emit the intent label token after original-order prompts (cross-entropy on the "
        "rule label); cached under the data directory and reused by the trade-off experiment."
    ),
    compute="compute.prefixshakeup.run:build_tagger",
    params=[
        Choice("tagger_size", "small", choices=["micro", "small", "medium"]),
        Int("tagger_steps", 0, min=0, max=5000, label="fine-tuning steps"),
        Int("tagger_probe", 4096, min=64, max=20000, log=True, label="probe prompts (head fit on frozen features)"),
        Float("omega", 1.0, min=0.0, max=4.0, label="order sensitivity ω of the label"),
    ],
    presets={"smoke": {"tagger_size": "micro", "tagger_steps": 3, "tagger_probe": 64}, "paper headline": {}},
    panels=[
        Line("Training loss", keys=["tagger/loss"], x_label="step", width=6),
        Table("Tagger", key="tagger", width=6),
    ],
    cost_seconds=300,
    soft_time_limit=1700,
    time_limit=1800,
)

EXPERIMENTS = [CAPACITY, TRADEOFF, INCREMENTAL, ENGINE, PLANNING, BUILD]

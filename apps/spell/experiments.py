"""Declarations of the spell paper and its experiments (no Django, no compute imports)."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import Bar, Bool, Choice, Experiment, Figure, Float, Histogram, Int, Line, Paper, Str, Table

PAPER = Paper(
    slug="spell",
    title="Self-programmed execution: the Spell language, where a model's completion is its own orchestrator",
    abstract=(
        "Instead of a fixed orchestrator between turns, the model's completion is itself the orchestrator program "
        "and the harness only evaluates it.  Spell is a small Lisp whose programs edit and re-evaluate themselves: "
        "`quine` binds a form's own source, effects are bound only inside `eval`, and only the quoted trailing "
        "expression of a turn runs, so re-evaluating an edited program never replays a side effect.  Turn "
        "producers (!llm-self, !extend, !call-now, !peek) and edit markers (prune, rethink, persist) let the model "
        "recurse, fork, call tools and manage its own context."
    ),
    arxiv="2605.06898",
    authors=[],
    tags=["LLM agents", "programming languages", "Lisp", "context management", "NeurIPS 2026"],
    notes=(
        "A pure-Python Spell interpreter (reader with exact spans, evaluator with dynamic scope and the effect "
        "boundary, edit markers, reopen), the SPE harness with budgets, an effect journal (design addition) that "
        "counts replays, a ReAct baseline with the same tools, and scripted deterministic models that write real "
        "Spell.  No hosted model is contacted unless a user sets an OpenAI-compatible endpoint (key from the "
        "SPELL_API_KEY environment variable, never stored in run configs).  The repository's benchmark numbers "
        "(Terminal-Bench, AIME, GSM8K, LongBench) need hosted frontier models and are not reproduced offline."
    ),
)

GAMES = [
    ("all", "all five games"),
    ("hello", "1. hello world via a child call"),
    ("coin_flip", "2. coin-flip recursion with a stop rule"),
    ("auction", "3. auction: 3 bidders forked as children"),
    ("twenty_questions", "4. twenty questions: secret never in a worker prefix"),
    ("telephone", "5. telephone relay through 8 stages"),
]


def _check_games(p: dict[str, Any]) -> dict[str, str] | None:
    if p["backend"] == "endpoint" and not p["base_url"]:
        return {"base_url": "the endpoint backend needs an OpenAI-compatible base URL"}
    return None


GAMES_EXP = Experiment(
    slug="games",
    title="Orchestration games under the SPE harness",
    description=(
        "Run the orchestration games (hello, coin flip, auction, twenty questions, telephone) with a chosen backend.\n"
        "Shows the program as it evolves turn by turn (what each completion appended), the call tree of "
        "self-calls and forks, prefix tokens per turn and the effect journal; every task check is scored from "
        "the trace.  The scripted backend is deterministic; 'replay' re-runs the recorded trace and checks it "
        "reproduces the result; 'endpoint' uses your OpenAI-compatible server."
    ),
    compute="compute.spell.run:games",
    params=[
        Choice("game", "all", choices=GAMES),
        Choice(
            "backend",
            "scripted",
            choices=[
                ("scripted", "scripted deterministic model"),
                ("replay", "replay the recorded trace"),
                ("endpoint", "OpenAI-compatible endpoint (configure below)"),
            ],
        ),
        Int("max_depth", 16, min=4, max=32, label="max self-call depth"),
        Int("repeats", 3, min=1, max=50, label="seeds per game"),
        Str(
            "base_url",
            "",
            max_length=300,
            label="endpoint base URL",
            help="e.g. http://localhost:8000/v1",
            group="Endpoint",
        ),
        Str("model", "", max_length=200, label="endpoint model name", group="Endpoint"),
        Choice("transport", "tool_call", choices=["tool_call", "message", "completions"], group="Endpoint"),
    ],
    presets={
        "smoke": {"game": "all", "repeats": 1},
        "replay check": {"backend": "replay", "repeats": 3},
        "paper headline": {"game": "all", "repeats": 10},
    },
    panels=[
        Table("Games: success, turns, tokens, replays", key="games", width=12),
        Table("Checks (scored from the trace)", key="checks", width=6),
        Figure("Call tree (self-calls and forks)", key="call_tree", width=6),
        Line(
            "Prefix tokens per turn", keys=["prefix_tokens/*"], x_label="turn", y_label="tokens", mode="lines+markers"
        ),
        Line("Effect journal: effects and replays", keys=["journal/effects", "journal/replays"], x_label="turn"),
        Table("Program evolution (first run): text appended each turn", key="program", width=12),
        Table("Effect journal (first run)", key="journal", width=12),
    ],
    cost_seconds=5,
    soft_time_limit=600,
    time_limit=700,
    check=_check_games,
)

CONTEXT_EXP = Experiment(
    slug="context_budget",
    title="Context budget: needle in a virtual file system, Spell vs ReAct",
    description=(
        "Peak context of a Spell agent (!peek, prune, persist) against an append-only ReAct transcript.\n"
        "N files of filler, one holds 'the secret code is …'.  Both agents read the same chunks in the same order; "
        "Spell keeps only its cursor, ReAct keeps every observation.  ReAct is run under the budget and unbounded "
        "(for the peak at equal success)."
    ),
    compute="compute.spell.run:context_budget",
    params=[
        Int("n_files", 16, min=4, max=64, label="files N"),
        Int("file_tokens", 2000, min=500, max=8000, label="tokens per file"),
        Choice("needle", "last", choices=["first", "middle", "last", "random"], label="needle position"),
        Int("budget", 8000, min=2000, max=32000, label="context budget (tokens)"),
        Bool("sweep", True, label="also sweep N = 4, 8, 16, … ≤ N"),
    ],
    presets={
        "smoke": {"n_files": 4, "file_tokens": 500, "budget": 2000, "sweep": False},
        "paper headline": {"n_files": 32, "file_tokens": 2000, "budget": 8000, "sweep": True},
    },
    panels=[
        Line("Prefix tokens per turn at N (Spell vs ReAct)", keys=["prefix/*"], x_label="turn", y_label="tokens"),
        Line("Peak context vs N", keys=["peak/*"], x_label="files N", y_label="tokens", mode="lines+markers"),
        Line("Total tokens vs N", keys=["total/*"], x_label="files N", y_label="tokens", mode="lines+markers"),
        Line("Success vs N", keys=["success/*"], x_label="files N", mode="lines+markers"),
        Table("Comparison", key="context", width=12),
    ],
    cost_seconds=20,
    soft_time_limit=900,
    time_limit=1000,
)

FUZZ_EXP = Experiment(
    slug="replay_fuzz",
    title="Replay-safety fuzzing",
    description=(
        "Random multi-turn programs with effects, forks and edit markers: replayed effects must stay 0.\n"
        "Checks the effect journal, re-evaluates every prefix a model saw (no effect may fire), the reader round "
        "trip, and that the harness never raises; a control run with the stale-trailing guard off shows the "
        "journal does catch replays."
    ),
    compute="compute.spell.run:replay_fuzz",
    params=[
        Int("n_programs", 1000, min=10, max=5000, log=True, label="random programs"),
        Int("max_turns", 6, min=1, max=20, label="turns per program"),
        Float("p_malformed", 0.1, min=0.0, max=0.5, label="probability of a malformed suffix"),
    ],
    presets={
        "smoke": {"n_programs": 20, "max_turns": 4},
        "paper headline": {"n_programs": 5000},
    },
    panels=[
        Line(
            "Replays, closed-prefix effects, round-trip failures, crashes (all must stay 0)",
            keys=["fuzz/replays", "fuzz/closed_prefix_effects", "fuzz/roundtrip_failures", "fuzz/crashes"],
            x_label="programs",
        ),
        Line("Effects fired", keys=["fuzz/effects"], x_label="programs"),
        Table("Fuzz summary", key="fuzz", width=12),
    ],
    cost_seconds=20,
    soft_time_limit=900,
    time_limit=1000,
)

GSM_EXP = Experiment(
    slug="gsm_calculator",
    title="Calculator GSM: Spell vs one-shot vs ReAct",
    description=(
        "Templated grade-school word problems: Spell calls the calculator via !call-now; one-shot answers directly; "
        "ReAct uses the same calculator.\nWith the scripted backend every agent is exact by construction, so only "
        "tokens and turns are informative offline; the accuracy comparison (the paper's GSM8K 94% vs 74% "
        "one-shot) needs a configured endpoint."
    ),
    compute="compute.spell.run:gsm",
    params=[
        Int("n_problems", 50, min=20, max=200, label="problems"),
        Choice(
            "backend",
            "scripted",
            choices=[("scripted", "scripted (offline)"), ("endpoint", "OpenAI-compatible endpoint")],
        ),
        Str("base_url", "", max_length=300, label="endpoint base URL", group="Endpoint"),
        Str("model", "", max_length=200, label="endpoint model name", group="Endpoint"),
        Choice("transport", "tool_call", choices=["tool_call", "message", "completions"], group="Endpoint"),
    ],
    presets={"smoke": {"n_problems": 20}, "paper headline": {"n_problems": 200}},
    panels=[
        Bar("Accuracy", table="gsm", x="agent", y=["accuracy"], width=4),
        Bar("Mean tokens per problem", table="gsm", x="agent", y=["mean_tokens"], width=4),
        Histogram("Turns per problem", keys=["turns/*"], width=4),
        Line("Running accuracy", keys=["acc/*"], x_label="problem"),
        Table("GSM summary", key="gsm", width=6),
    ],
    cost_seconds=5,
    soft_time_limit=900,
    time_limit=1000,
    check=_check_games,
)

EXPERIMENTS = [GAMES_EXP, CONTEXT_EXP, GSM_EXP, FUZZ_EXP]

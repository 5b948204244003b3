"""Entry points of the spell experiments: ``fn(params, reporter) -> summary``.

E1 ``games``          — orchestration games 1–5 under the SPE harness, live program / journal / context views.
E2 ``context_budget`` — needle in a virtual file system: Spell (!peek/prune/persist) vs append-only ReAct.
E4 ``replay_fuzz``    — random programs with effects and edit markers: replays must stay 0.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

from compute.core.reporter import Reporter
from compute.spell.backends import BackendError, OpenAICompatBackend, ReplayBackend
from compute.spell.config import ContextConfig, FuzzConfig, GamesConfig
from compute.spell.fuzz import FuzzStats, fuzz_program, stale_control
from compute.spell.harness import Harness, HarnessConfig, ToolBox, is_error, n_tokens
from compute.spell.react_baseline import react_needle_backend, run_react
from compute.spell.reader import pr_str
from compute.spell.tasks import GAME_FNS, GAMES, make_files, needle_position, spell_needle_backend


def _icicle(h: Harness, title: str) -> dict[str, Any]:
    """Plotly icicle of the call tree: one box per run (root, self-calls, forks), sized by its turns."""
    ids = [r.path for r in h.runs]
    labels = [f"{r.path.rsplit('/', 1)[-1]} ({r.turns} turns) → {r.value[:40]}" for r in h.runs]
    parents = [r.parent or "" for r in h.runs]
    return {
        "data": [{"type": "icicle", "ids": ids, "labels": labels, "parents": parents, "values": [1] * len(ids)}],
        "layout": {"title": title, "margin": {"t": 40, "l": 0, "r": 0, "b": 0}},
    }


def prefix_diffs(h: Harness) -> dict[int, str]:
    """turn → the +/- lines between the prefix the model got and the next prefix of the same run (edits included)."""
    out: dict[int, str] = {}
    for rec in h.runs:
        turns = [t for t in h.turns if t.path == rec.path]
        for k, t in enumerate(turns):
            if k + 1 < len(rec.prefixes):
                a, b = rec.prefixes[k].splitlines(), rec.prefixes[k + 1].splitlines()
                lines = [ln for ln in difflib.unified_diff(a, b, lineterm="", n=0) if ln[:1] in "+-"]
                out[t.turn] = "\n".join(ln for ln in lines if not ln.startswith(("+++", "---")))
    return out


def _endpoint(cfg: GamesConfig) -> OpenAICompatBackend:
    return OpenAICompatBackend(cfg.base_url, cfg.model, os.environ.get("SPELL_API_KEY", ""), cfg.transport)


def games(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E1: run the orchestration games; every check is scored from the trace."""
    cfg = GamesConfig.from_params(params)
    names = GAMES if cfg.game == "all" else [cfg.game]
    hcfg = HarnessConfig(max_depth=cfg.max_depth)
    if cfg.backend == "endpoint" and not cfg.base_url:
        raise BackendError("backend 'endpoint' needs base_url (no endpoint is contacted unless configured)")
    rows, checks, program, shown = [], [], [], None
    total_turn = 0
    effects = replays = 0
    n_jobs, done = len(names) * cfg.repeats, 0
    for name in names:
        for r in range(cfg.repeats):
            seed = cfg.seed + r
            res = GAME_FNS[name](seed, hcfg)
            if cfg.backend == "replay":  # deterministic replay of the recorded trace must give the same result
                recorded = res.value
                res = GAME_FNS[name](seed, hcfg, backend=ReplayBackend(res.harness.trace))
                res.checks["replayed trace gives the same value"] = pr_str(res.value) == pr_str(recorded)
            elif cfg.backend == "endpoint":
                res = GAME_FNS[name](seed, hcfg, backend=_endpoint(cfg))
            h = res.harness
            for t in h.turns:
                total_turn += 1
                effects += t.effects
                replays += sum(e.replay for e in h.journal if e.turn == t.turn)
                reporter.scalars(
                    total_turn,
                    {f"prefix_tokens/{name}": t.prefix_tokens, "journal/effects": effects, "journal/replays": replays},
                )
            for c, ok in res.checks.items():
                checks.append({"game": name, "seed": seed, "check": c, "status": "pass" if ok else "FAIL"})
            rows.append(
                {
                    "game": name,
                    "seed": seed,
                    "success": res.success,
                    "value": pr_str(res.value)[:80],
                    "runs": len(h.runs),
                    "turns": len(h.turns),
                    "total_tokens": h.total_tokens,
                    "peak_prefix": h.peak_prefix_tokens,
                    "edits": h.edits,
                    "effects": len(h.journal),
                    "replays": h.replays,
                    "closed_prefix_effects": h.closed_prefix_effects(),
                }
            )
            if shown is None:
                shown = h
                diffs = prefix_diffs(h)
                for t in h.turns:
                    program.append(
                        {
                            "turn": t.turn,
                            "run": t.path,
                            "prefix_tokens": t.prefix_tokens,
                            "appended by the model": t.suffix,
                            "next prefix diff (splices and edits)": diffs.get(t.turn, ""),
                            "outcome": t.outcome,
                            "edits": t.edits,
                            "effects": t.effects,
                            "message": t.message,
                        }
                    )
                reporter.table("program", program)
                reporter.figure("call_tree", _icicle(h, f"{name}, seed {seed}: call tree"))
                reporter.table(
                    "journal",
                    [
                        {
                            "turn": e.turn,
                            "run": e.path,
                            "effect": e.name,
                            "form sha256": e.key[:12],
                            "result sha256": e.result[:12],
                            "replay": e.replay,
                        }
                        for e in h.journal
                    ],
                )
            reporter.table("games", rows)
            reporter.table("checks", checks)
            done += 1
            reporter.progress(done / n_jobs, f"{name} seed {seed}: {'solved' if res.success else 'FAILED'}")
            if reporter.should_stop():
                return _games_summary(rows, partial=True)
    return _games_summary(rows)


def _games_summary(rows: list[dict[str, Any]], partial: bool = False) -> dict[str, Any]:
    n = len(rows)
    return {
        "runs": n,
        "success_rate": sum(r["success"] for r in rows) / n if n else 0.0,
        "replays": sum(r["replays"] for r in rows),
        "closed_prefix_effects": sum(r["closed_prefix_effects"] for r in rows),
        "turns": sum(r["turns"] for r in rows),
        "partial": partial,
    }


def needle_once(n_files: int, file_tokens: int, needle: str, budget: int, seed: int) -> dict[str, Any]:
    """One E2 comparison on identical files: Spell under the budget, ReAct under the budget and unbounded."""
    target = needle_position(needle, n_files, seed)
    files, code = make_files(n_files, file_tokens, target, seed)
    chunk = min(8000, 4 * budget // 3)  # one chunk must fit the budget with room for the program
    task = "needle: find the secret code hidden in one of the files; the context budget is small"
    h = Harness(spell_needle_backend(chunk), ToolBox(dict(files), seed=seed), HarnessConfig(max_prefix_tokens=budget))
    v = h.run(task)
    spell_prefix = [t.prefix_tokens + n_tokens(h.system) for t in h.turns]  # context = system + prefix
    react = run_react(react_needle_backend(chunk), ToolBox(dict(files), seed=seed), task, budget=budget)
    react_free = run_react(react_needle_backend(chunk), ToolBox(dict(files), seed=seed), task, budget=10**9)
    return {
        "n_files": n_files,
        "spell_success": v == code and not is_error(v),
        "spell_peak": max(spell_prefix),
        "spell_total": h.total_tokens,
        "spell_turns": len(h.turns),
        "spell_replays": h.replays,
        "spell_edits": h.edits,
        "react_success": react.answer == code,
        "react_error": react.error,
        "react_peak": react.peak,
        "react_total": react.total_tokens,
        "react_unbounded_success": react_free.answer == code,
        "react_unbounded_peak": react_free.peak,
        "react_unbounded_total": react_free.total_tokens,
        "_spell_series": spell_prefix,
        "_react_series": react_free.prompt_tokens,
    }


def context_budget(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E2: peak context of Spell vs ReAct on the needle task, at N files and over a sweep of N."""
    cfg = ContextConfig.from_params(params)
    ns = sorted({n for n in (4, 8, 16, 32, 64) if n <= cfg.n_files} | {cfg.n_files}) if cfg.sweep else [cfg.n_files]
    rows = []
    main: dict[str, Any] = {}
    for k, n in enumerate(ns):
        r = needle_once(n, cfg.file_tokens, cfg.needle, cfg.budget, cfg.seed)
        if n == cfg.n_files:
            main = r
            reporter.series("prefix/spell", list(range(1, len(r["_spell_series"]) + 1)), r["_spell_series"])
            reporter.series("prefix/react", list(range(1, len(r["_react_series"]) + 1)), r["_react_series"])
        reporter.scalars(
            n,
            {
                "peak/spell": r["spell_peak"],
                "peak/react_unbounded": r["react_unbounded_peak"],
                "total/spell": r["spell_total"],
                "total/react_unbounded": r["react_unbounded_total"],
                "success/spell": float(r["spell_success"]),
                "success/react_under_budget": float(r["react_success"]),
            },
        )
        row = {k2: v for k2, v in r.items() if not k2.startswith("_")}
        row["peak_ratio_spell_over_react"] = round(r["spell_peak"] / max(1, r["react_unbounded_peak"]), 4)
        rows.append(row)
        reporter.table("context", rows)
        reporter.progress(
            (k + 1) / len(ns), f"N={n}: Spell peak {r['spell_peak']} vs ReAct {r['react_unbounded_peak']}"
        )
        if reporter.should_stop():
            break
    main = main or rows[-1]
    return {
        "n_files": main["n_files"],
        "spell_success": main["spell_success"],
        "react_success_under_budget": main["react_success"],
        "react_unbounded_success": main["react_unbounded_success"],
        "spell_peak": main["spell_peak"],
        "react_peak_unbounded": main["react_unbounded_peak"],
        "peak_ratio": main["spell_peak"] / max(1, main["react_unbounded_peak"]),
        "spell_replays": sum(r["spell_replays"] for r in rows),
    }


def replay_fuzz(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E4: random programs; the journal's replay count and the closed-prefix check must both stay 0."""
    cfg = FuzzConfig.from_params(params)
    s = FuzzStats()
    blocked = 0
    every = max(1, cfg.n_programs // 50)
    for i in range(cfg.n_programs):
        try:
            h, rt = fuzz_program(cfg.seed * 1_000_003 + i, cfg.max_turns, cfg.p_malformed)
        except Exception as exc:  # noqa: BLE001 - a crash is what this experiment counts
            s.crashes += 1
            reporter.log(f"program {i}: harness raised {type(exc).__name__}: {exc}", "error")
            continue
        s.programs += 1
        s.turns += len(h.turns)
        s.effects += len(h.journal)
        s.replays += h.replays
        s.closed_prefix_effects += h.closed_prefix_effects()
        s.roundtrip_failures += rt
        s.errors_returned += h.errors
        s.edits += h.edits
        blocked += sum("old text" in t.message for t in h.turns)
        if (i + 1) % every == 0 or i + 1 == cfg.n_programs:
            reporter.scalars(
                i + 1,
                {
                    "fuzz/replays": s.replays,
                    "fuzz/closed_prefix_effects": s.closed_prefix_effects,
                    "fuzz/roundtrip_failures": s.roundtrip_failures,
                    "fuzz/crashes": s.crashes,
                    "fuzz/effects": s.effects,
                },
            )
            reporter.progress((i + 1) / cfg.n_programs, f"{i + 1} programs, {s.effects} effects, {s.replays} replays")
            if reporter.should_stop():
                break
    summary = dict(s.__dict__)
    summary["stale_trailing_blocked"] = blocked
    # detector control: a stale trailing form with the guard off must be counted (the check can fail)
    summary["control_replays_guard_off"] = stale_control(guard=False).replays
    summary["control_replays_guard_on"] = stale_control(guard=True).replays
    reporter.table("fuzz", [{"metric": k, "value": v} for k, v in summary.items()])
    return summary


def _number(x: Any) -> float | None:
    """The final number in an answer (value or text); None if there is none."""
    import re

    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    m = re.findall(r"-?\d+(?:\.\d+)?", str(x).replace(",", "")) if x is not None else []
    return float(m[-1]) if m else None


def gsm(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E3: accuracy, tokens and turns of Spell, one-shot and ReAct on the same templated problems."""
    from compute.spell.config import GsmConfig
    from compute.spell.react_baseline import one_shot, one_shot_gsm_backend, react_gsm_backend
    from compute.spell.tasks import make_gsm, spell_gsm_backend

    cfg = GsmConfig.from_params(params)
    if cfg.backend == "endpoint":
        ep = _endpoint(GamesConfig(base_url=cfg.base_url, model=cfg.model, transport=cfg.transport))
        spell_b, react_b, one_b = ep, ep, ep
    else:
        spell_b, react_b, one_b = spell_gsm_backend(), react_gsm_backend(), one_shot_gsm_backend()
    problems = make_gsm(cfg.n_problems, cfg.seed)
    stats = {a: {"correct": 0, "tokens": 0, "turns": 0, "replays": 0} for a in ("spell", "one_shot", "react")}
    for i, (q, ans, _) in enumerate(problems):
        h = Harness(spell_b, ToolBox(seed=cfg.seed + i), HarnessConfig(max_turns=8))
        v = h.run("gsm: " + q)
        r = run_react(react_b, ToolBox(seed=cfg.seed + i), q, max_steps=8)
        o, o_tokens = one_shot(one_b, q)
        outcomes = {
            "spell": (_number(v) == ans, h.total_tokens, len(h.turns), h.replays),
            "react": (_number(r.answer) == ans, r.total_tokens, r.steps, 0),
            "one_shot": (_number(o) == ans, o_tokens, 1, 0),
        }
        for a, (ok, toks, turns, rep) in outcomes.items():
            s = stats[a]
            s["correct"] += ok
            s["tokens"] += toks
            s["turns"] += turns
            s["replays"] += rep
            reporter.scalar(f"acc/{a}", i + 1, s["correct"] / (i + 1))
            reporter.scalar(f"turns/{a}", i + 1, turns)
        reporter.progress((i + 1) / len(problems), f"{i + 1}/{len(problems)} problems")
        if reporter.should_stop():
            problems = problems[: i + 1]
            break
    n = len(problems)
    rows = [
        {
            "agent": a,
            "backend": cfg.backend if cfg.backend == "endpoint" else "scripted (accuracy not meaningful offline)",
            "accuracy": s["correct"] / n,
            "mean_tokens": s["tokens"] / n,
            "mean_turns": s["turns"] / n,
            "replays": s["replays"],
        }
        for a, s in stats.items()
    ]
    reporter.table("gsm", rows)
    return (
        {f"{r['agent']}_accuracy": r["accuracy"] for r in rows}
        | {f"{r['agent']}_mean_tokens": r["mean_tokens"] for r in rows}
        | {"problems": n, "backend": cfg.backend, "spell_replays": stats["spell"]["replays"]}
    )

"""The experiments' bodies (run inside the isolated runner): E1 incident, E2 sweep, E3 metastability, E4 noise."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import math
import statistics
from typing import Any

from compute.core.reporter import Reporter
from compute.sregym.agents import LLMAgent, ScriptedAgent
from compute.sregym.app.httpio import HttpError
from compute.sregym.app.topology import DEPS, SERVICES
from compute.sregym.conductor import Timings, run_incident
from compute.sregym.config import IncidentConfig, MetastableConfig, NoiseConfig, SweepConfig
from compute.sregym.metastable import TriggerConfig, boundary_rate, classify, trigger_run
from compute.sregym.oracles import llm_judge
from compute.sregym.problems import BY_ID, CATEGORIES, SUITE

ENV_ERRORS = (HttpError, OSError, RuntimeError, TimeoutError)
POS = {"gateway": (0, 2), "catalog": (1, 3), "recommender": (1, 2), "cart": (1, 1), "checkout": (2, 1),
       "payment": (3, 1), "datastore": (2, 3)}  # fmt: skip


def make_agent(name: str, base_url: str = "", model: str = "") -> Any:
    if name == "llm":
        if not base_url:
            raise ValueError("the LLM agent needs llm_base_url (an OpenAI-compatible endpoint)")
        return LLMAgent(base_url, model or "gpt-4o-mini")
    return ScriptedAgent()


def topology_figure(health: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Service graph coloured by health: green ok, orange slow (p95 > 0.5 s), red errors > 5%, black down."""
    edges_x, edges_y = [], []
    for s, deps in DEPS.items():
        for d in deps:
            edges_x += [POS[s][0], POS[d][0], None]
            edges_y += [POS[s][1], POS[d][1], None]
    colours, text = [], []
    for n in POS:
        h = health.get(n) or {}
        if n == "datastore":
            colours.append("#888")
        elif h.get("ready", 1) == 0:
            colours.append("black")
        elif (h.get("err") or 0) > 0.05:
            colours.append("#d62728")
        elif (h.get("p95") or 0) > 0.5:
            colours.append("#ff7f0e")
        else:
            colours.append("#2ca02c")
        text.append(f"{n}<br>err {100 * (h.get('err') or 0):.0f}%" if h else n)
    return {
        "data": [
            {"type": "scatter", "mode": "lines", "x": edges_x, "y": edges_y, "line": {"color": "#bbb"}, "hoverinfo": "skip"},
            {"type": "scatter", "mode": "markers+text", "x": [p[0] for p in POS.values()], "y": [p[1] for p in POS.values()],
             "text": text, "textposition": "top center", "marker": {"size": 28, "color": colours}},
        ],
        "layout": {"showlegend": False, "xaxis": {"visible": False}, "yaxis": {"visible": False}},
    }  # fmt: skip


def _timings(cfg: Any) -> Timings:
    return Timings(
        rate=cfg.rate,
        baseline_s=cfg.baseline_s,
        settle_s=cfg.settle_s,
        probe_s=cfg.probe_s,
        deadline_s=getattr(cfg, "deadline_s", 60.0),
        alert_s=getattr(cfg, "alert_s", 0.0),
    )


def verdict_rows(res: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for k in ("detection", "localization", "diagnosis", "llm_judge", "mitigation", "alert", "recovered"):
        if k in res:
            v = res[k]
            rows.append(
                {
                    "oracle": k,
                    "success": v["success"],
                    "reason": v["reason"][:200],
                    "failure class": v.get("failure_class"),
                }
            )
    for k in ("ttd", "ttl", "ttm"):
        rows.append(
            {
                "oracle": k.upper(),
                "success": res.get(k) is not None,
                "reason": f"{res[k]:.1f} s" if res.get(k) is not None else "—",
            }
        )
    return rows


async def incident(params: dict[str, Any], rep: Reporter) -> dict[str, Any]:
    """E1: one incident, streamed live."""
    cfg = IncidentConfig.from_params(params)
    problem = BY_ID[cfg.problem]
    agent = make_agent(cfg.agent, cfg.llm_base_url, cfg.llm_model)
    transcript: list[dict[str, Any]] = []
    total = cfg.baseline_s + cfg.settle_s + 20 + cfg.deadline_s / 2

    def emit(kind: str, payload: dict[str, Any]) -> None:
        if kind == "scalars":
            rep.scalars(payload["step"], payload["values"])
            rep.progress(min(0.95, payload["step"] / total), f"t = {payload['step']:.0f} s")
        elif kind == "event":
            rep.scalar(
                f"events/{payload['kind']}",
                payload["t"],
                SERVICES.index(payload["service"]) if payload["service"] in SERVICES else -1,
            )
            rep.log(f"[{payload['t']:.1f} s] {payload['kind']} {payload['service']} {payload['detail']}")
        elif kind == "transcript":
            transcript.append(payload)
            rep.table(
                "transcript",
                [
                    {"t": e["t"], "step": e["step"], "tool": e["tool"], "args": json.dumps(e["args"])}
                    for e in transcript
                ],
            )
        elif kind == "health":
            rep.figure("topology", topology_figure(payload))
        elif kind == "log":
            rep.log(payload["msg"])

    res = await run_incident(
        problem, agent, cfg.noise, cfg.seed, cfg.max_steps, _timings(cfg), emit=emit, mitigation=cfg.mitigation
    )
    if cfg.llm_base_url and problem.has_fault:  # optional: SREGym's LLM checklist judge on the diagnosis
        dia = next((e["args"]["diagnosis"] for e in res["transcript"] if e["tool"] == "submit_diagnosis"), {})
        res["llm_judge"] = await asyncio.to_thread(llm_judge, dia, res["root_cause"], cfg.llm_base_url, cfg.llm_model)
    rep.table("verdicts", verdict_rows(res))
    rep.table("transcript", [{"t": e["t"], "step": e.get("step"), "tool": e["tool"], "args": json.dumps(e.get("args", {})),
                              "result": str(e.get("result", ""))[:300]} for e in res["transcript"]])  # fmt: skip
    rep.artifact("incident.json", json.dumps(res, default=str, indent=1), "application/json")
    rep.progress(1.0, "done")
    return _summary(res)


def _summary(res: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"problem": res["problem"], "agent": res["agent"], "noise": res["noise"]}
    for k in ("detection", "localization", "diagnosis", "mitigation", "recovered"):
        if k in res:
            out[k] = res[k]["success"]
    if "localization" in res:
        out["localization_score"] = res["localization"]["detail"].get("score", 0.0)
    for k in ("ttd", "ttl", "ttm"):
        out[k] = res.get(k)
    if "mitigation" in res:
        out["mitigation_reason"] = res["mitigation"]["reason"][:160]
        out["environment_failure"] = res["mitigation"].get("failure_class") == "environment"
    out["baseline_slo"] = res.get("baseline_slo", {}).get("success")
    return out


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (agent, category): n, detection / localisation / diagnosis / mitigation success rates, median TTM."""
    out = []
    for agent in sorted({r["agent"] for r in rows}):
        for cat in CATEGORIES:
            sub = [r for r in rows if r["agent"] == agent and r["category"] == cat]
            if not sub:
                continue

            def rate(k: str, sub: list[dict[str, Any]] = sub) -> float | None:
                vals = [r[k] for r in sub if r.get(k) is not None]
                return round(100 * sum(vals) / len(vals), 1) if vals else None

            ttm = [r["ttm"] for r in sub if r.get("ttm") is not None]
            clean = [r for r in sub if not r.get("environment_failure") and not r.get("environment_error")]
            out.append({"agent": agent, "category": cat, "n": len(sub), "detection %": rate("detection"),
                        "localization %": rate("localization"), "diagnosis %": rate("diagnosis"),
                        "mitigation %": rate("mitigation"), "mitigation % (healthy baseline)": rate("mitigation", clean),
                        "environment failures": len(sub) - len(clean), "median TTM s": round(statistics.median(ttm), 1) if ttm else None})  # fmt: skip
    return out


def heatmap(agg: list[dict[str, Any]]) -> dict[str, Any]:
    agents = sorted({a["agent"] for a in agg})
    cats = [c for c in CATEGORIES if any(a["category"] == c for a in agg)]
    z = [
        [next((a["mitigation %"] for a in agg if a["agent"] == ag and a["category"] == c), None) for c in cats]
        for ag in agents
    ]
    return {"data": [{"type": "heatmap", "x": cats, "y": agents, "z": z, "zmin": 0, "zmax": 100, "colorscale": "RdYlGn",
                      "text": [[f"{v:.0f}%" if v is not None else "" for v in row] for row in z], "texttemplate": "%{text}"}],
            "layout": {"title": {"text": "mitigation success by failure category"}}}  # fmt: skip


async def sweep(params: dict[str, Any], rep: Reporter) -> dict[str, Any]:
    """E2: problems × agents × seeds, one incident at a time (CPU contention masks faults)."""
    cfg = SweepConfig.from_params(params)
    pids = problem_ids(cfg.problem_set)
    agents = cfg.agents.split("+")
    runs = [(pid, ag, cfg.seed + s) for s in range(cfg.n_seeds) for pid in pids for ag in agents]
    rows: list[dict[str, Any]] = []
    for i, (pid, ag, seed) in enumerate(runs):
        rep.progress(i / len(runs), f"{pid} × {ag} × seed {seed}")
        agent = make_agent(ag, cfg.llm_base_url, cfg.llm_model)
        try:
            res = await run_incident(
                BY_ID[pid], agent, cfg.noise, seed, cfg.max_steps, _timings(cfg), mitigation=cfg.mitigation
            )
            row = {"category": BY_ID[pid].category, "seed": seed, **_summary(res)}
        except ENV_ERRORS as exc:  # an environment failure (e.g. a starved machine), not the agent's
            rep.log(f"{pid} × {ag}: environment failure: {exc}", "warning")
            row = {"category": BY_ID[pid].category, "seed": seed, "problem": pid, "agent": ag, "noise": cfg.noise,
                   "environment_error": str(exc)[:200]}  # fmt: skip
        rows.append(row)
        rep.log(f"{pid} × {ag}: " + ", ".join(f"{k}={row.get(k)}" for k in ("detection", "localization", "mitigation")))
        rep.scalar(f"mitigation/{ag}", i, float(bool(row.get("mitigation"))))
        agg = aggregate(rows)
        rep.table("verdicts", rows)
        rep.table("categories", agg)
        rep.figure("heatmap", heatmap(agg))
        rep.figure("ttm_box", {"data": [{"type": "box", "name": c, "y": [r["ttm"] for r in rows if r["category"] == c and r.get("ttm") is not None]}
                                        for c in CATEGORIES if any(r["category"] == c for r in rows)],
                               "layout": {"yaxis": {"title": {"text": "TTM (s)"}}}})  # fmt: skip
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
    w.writeheader()
    w.writerows(rows)
    rep.artifact("verdicts.csv", buf.getvalue(), "text/csv")
    agg = aggregate(rows)
    rep.artifact("categories.json", json.dumps(agg, indent=1), "application/json")
    rep.progress(1.0, "done")
    return {"runs": len(rows), **spread(agg)}


def problem_ids(problem_set: str) -> list[str]:
    """'suite' → all 20; a category → its problems; otherwise one problem id."""
    if problem_set == "suite":
        return [p.pid for p in SUITE]
    if problem_set in CATEGORIES:
        return [p.pid for p in SUITE if p.category == problem_set]
    return [BY_ID[problem_set].pid]


def spread(agg: list[dict[str, Any]]) -> dict[str, Any]:
    """The "capability varies by failure kind" numbers: per-category mitigation % and the max − min spread."""
    out: dict[str, Any] = {}
    for a in agg:
        if a["category"] != "no-fault" and a["mitigation %"] is not None:
            out[f"mitigation_{a['agent']}_{a['category']}"] = a["mitigation %"]
    vals = [v for k, v in out.items()]
    out["spread_points"] = (max(vals) - min(vals)) if vals else 0.0
    return out


async def metastability(params: dict[str, Any], rep: Reporter) -> dict[str, Any]:
    """E3: goodput after the trigger is removed, over a retries × load grid, with the λ(1+R) = μ boundary."""
    cfg = MetastableConfig.from_params(params)
    mu = cfg.c / (cfg.service_ms / 1000)
    grid = [(r, lam) for r in cfg.retries for lam in cfg.rates]
    rows = []
    for i, (r, lam) in enumerate(grid):
        rep.progress(i / len(grid), f"R = {r}, λ = {lam:g} rps")
        tc = TriggerConfig(rate=lam, retries=r, timeout_ms=cfg.timeout_ms, backoff_ms=cfg.backoff_ms, c=cfg.c,
                           service_ms=cfg.service_ms, queue_limit=cfg.queue_limit, trigger_ms=cfg.trigger_ms,
                           warmup_s=cfg.warmup_s, trigger_s=cfg.trigger_s, after_s=cfg.after_s, seed=cfg.seed + i)  # fmt: skip
        key = f"R{r}_l{lam:g}"

        def on_second(s: int, d: dict[str, float], key: str = key) -> None:
            rep.scalars(s, {f"goodput/{key}": d["goodput"], f"amplification/{key}": d["amplification"]})

        res = await trigger_run(tc, on_second=on_second)
        res.pop("goodput")
        rows.append({"R": r, "λ (rps)": lam, "μ (rps)": mu, "λ(1+R)": lam * (1 + r), "predicted": classify(lam, mu, r),
                     "goodput before": round(res["goodput_before"], 3), "goodput, last 5 s": round(res["goodput_end"], 3),
                     "s below 50% after removal": res["low_seconds_after_removal"], "recovery s": res["recovery_s"],
                     "observed": "stuck" if res["stuck"] else ("overloaded" if res["goodput_before"] < 0.5 else "recovered")})  # fmt: skip
        rep.table("grid", rows)
        rep.figure("phase", phase_figure(rows, mu, cfg))
    agree = sum(1 for row in rows if (row["observed"] != "recovered") == (row["predicted"] != "stable"))
    rep.progress(1.0, "done")
    return {"points": len(rows), "agree_with_closed_form": agree, "mu": mu}


def phase_figure(rows: list[dict[str, Any]], mu: float, cfg: MetastableConfig) -> dict[str, Any]:
    rs = sorted({row["R"] for row in rows})
    r_line = [x / 10 for x in range(0, 10 * (max(rs) + 1) + 1)]
    return {
        "data": [
            {"type": "scatter", "mode": "markers", "x": [row["R"] for row in rows], "y": [row["λ (rps)"] for row in rows],
             "marker": {"size": 22, "color": [row["goodput, last 5 s"] for row in rows], "colorscale": "RdYlGn", "cmin": 0, "cmax": 1,
                        "colorbar": {"title": {"text": "goodput"}}}, "name": "goodput in the last 5 s",
             "text": [row["observed"] for row in rows]},
            {"type": "scatter", "mode": "lines", "x": r_line, "y": [boundary_rate(mu, r) for r in r_line], "name": "λ(1+R) = μ"},
            {"type": "scatter", "mode": "lines", "x": [0, max(rs) + 1], "y": [mu, mu], "name": "λ = μ", "line": {"dash": "dot"}},
        ],
        "layout": {"xaxis": {"title": {"text": "retries R"}}, "yaxis": {"title": {"text": "λ (rps)"}}},
    }  # fmt: skip


async def noise_robustness(params: dict[str, Any], rep: Reporter) -> dict[str, Any]:
    """E4: detection false-positive rate (no-fault controls) and localisation accuracy per noise level."""
    cfg = NoiseConfig.from_params(params)
    tm = Timings(rate=cfg.rate, baseline_s=cfg.baseline_s, settle_s=cfg.settle_s, probe_s=cfg.probe_s)
    rows, n, done = [], len(cfg.levels.split(",")) * (cfg.n_seeds + cfg.n_controls), 0
    for li, level in enumerate(cfg.levels.split(",")):
        fp, loc = [], []
        for s in range(cfg.n_controls):
            rep.progress(done / n, f"noise {level}: control {s}")
            try:
                res = await run_incident(
                    BY_ID["no_fault"], ScriptedAgent(), level, cfg.seed + 100 + s, timings=tm, mitigation=False
                )
                fp.append(0.0 if res["detection"]["success"] else 1.0)
            except ENV_ERRORS as exc:
                rep.log(f"control {s} at noise {level}: environment failure: {exc}", "warning")
            done += 1
        for s in range(cfg.n_seeds):
            rep.progress(done / n, f"noise {level}: {cfg.problem} seed {s}")
            try:
                res = await run_incident(
                    BY_ID[cfg.problem], ScriptedAgent(), level, cfg.seed + s, timings=tm, mitigation=False
                )
                loc.append(res["localization"]["detail"].get("score", 0.0))
            except ENV_ERRORS as exc:
                rep.log(f"{cfg.problem} seed {s} at noise {level}: environment failure: {exc}", "warning")
            done += 1
        row = {"noise": level, "controls": len(fp), "false-positive rate": statistics.fmean(fp) if fp else math.nan,
               "fault runs": len(loc), "localization accuracy": statistics.fmean(loc) if loc else math.nan}  # fmt: skip
        rows.append(row)
        rep.scalars(li, {"noise/fpr": row["false-positive rate"], "noise/localization": row["localization accuracy"]})
        rep.table("noise", rows)
    rep.progress(1.0, "done")
    return {f"{r['noise']}_{k}": r[k] for r in rows for k in ("false-positive rate", "localization accuracy")}


def run_job(job: str, params: dict[str, Any], rep: Reporter) -> dict[str, Any]:
    """In-process execution (tests, bench): asyncio.run the job."""
    return asyncio.run(globals()[job](params, rep))

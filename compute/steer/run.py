"""Entry points (spec steer §3): the SFT build with the pre-RL gate, E1 route RL (one method), E2 Pareto sweep.

``sft_build``  builds/loads the over-reasoning SFT checkpoint and measures the gate: forced-CoT minus
               forced-direct score per hidden tier (greedy plans on held-out scenes).
``route_rl``   one method from the checkpoint: live p_c / CoT share per hidden tier, scores, tokens per scene,
               quota, two-route groups, σ_Δ; greedy held-out evaluation every ``eval_every`` steps; final
               per-tier table, route × tier confusion, p_c-vs-Δ scatter and the p_c histogram.
``pareto``     methods × λ (+ always-/never-CoT) × seeds: final score against mean generated tokens, front drawn.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from compute.core.lm.optim import AdamW
from compute.core.lm.sampling import left_pad
from compute.core.rl.trainer import GRPOTrainer
from compute.core.runtime import resolve_device, seed_everything
from compute.core.tasks.base import split_rng
from compute.steer.config import METHOD_LABELS, SteerConfig
from compute.steer.evaluate import (
    RouteHead,
    attach_route_head,
    rollout_eval,
    route_audit,
    route_head,
    spearman,
    summarise,
)
from compute.steer.inspector import (
    POLICY_DIR,
    ROUTES,
    TIER_COLORS,
    audit_fig,
    inspect_policy,
    load_policy,
    pc_hist_fig,
)
from compute.steer.plugin import METHODS, route_features
from compute.steer.scenes import TIERS
from compute.steer.sft import load_or_build
from compute.steer.traces import DIRECT, THINK

FORCED = {"always_cot": THINK, "never_cot": DIRECT}


class SteerTrainer(GRPOTrainer):
    """GRPOTrainer whose held-out evaluation is the driving one: greedy route (or the method's forced route) and
    greedy plan on fixed test scenes; ``acc/heldout`` is the mean reward score."""

    def __init__(self, *a: Any, route: str | None = None, route_lr: float = 0.0, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.route = route
        head = route_head(self.model)
        if head is not None:  # the route head: its own Adam beside the LM's (the plug-in's extra_loss)
            if self.cfg.ppo_epochs != 1 or self.cfg.mini_batches != 1:
                raise ValueError(
                    "the route head's term takes its old log-prob from the same update: one epoch, one batch"
                )
            self.opt = _WithHead(self.opt, AdamW(head.parameters(), lr=route_lr, betas=(0.9, 0.99), weight_decay=0.0))

    def evaluate(self, problems: list[Any] | None = None, batch: int = 256) -> dict[str, float]:
        probs = problems if problems is not None else self.eval_problems[: self.cfg.n_eval]
        rows = rollout_eval(self.model, self.task, probs, self.route, self.cfg.max_new)
        out = summarise(rows, "eval/")
        out["acc/heldout"] = float(np.mean([r["reward"] for r in rows]))
        return out


class _WithHead:
    """The LM's optimizer (whose ``param_groups`` schedules see) stepped together with the route head's."""

    def __init__(self, lm: AdamW, head: AdamW) -> None:
        self.lm, self.head, self.param_groups = lm, head, lm.param_groups

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.lm.zero_grad(set_to_none)
        self.head.zero_grad(set_to_none)

    def step(self) -> None:
        self.lm.step()
        self.head.step()


def new_route_head(model: Any, task: Any, seed: int, n: int = 256) -> RouteHead:
    """A zero route head centred on the mean final features of ``n`` training scenes under ``model``."""
    probs = task.sample(n, split_rng(seed + 20_000, "train"), "train")
    tok, mask = left_pad([task.prompt(p) for p in probs], 0, model.device)
    return RouteHead(route_features(model, tok, mask)[-1].float().mean(0))


def _setup(params: dict[str, Any]) -> SteerConfig:
    cfg = SteerConfig.from_params(params)
    cfg.device = resolve_device(cfg.device)
    if "threads" in params:
        torch.set_num_threads(max(1, int(params["threads"])))
    seed_everything(cfg.seed)
    return cfg


def _checkpoint(cfg: SteerConfig, reporter: Any) -> Any:
    res = load_or_build(cfg.sft_config(), reporter.data_dir, reporter, cfg.device)
    res.task.metric = cfg.metric
    return res


def final_problems(cfg: SteerConfig, task: Any) -> list[Any]:
    return task.sample(cfg.n_eval_final, split_rng(cfg.seed + 10_000, "test"), "test")


def gate_rows(model: Any, task: Any, problems: list[Any], max_new: int) -> list[dict[str, Any]]:
    """Forced-CoT vs forced-direct greedy scores per tier (the spec's pre-RL gate)."""
    th = summarise(rollout_eval(model, task, problems, THINK, max_new))
    di = summarise(rollout_eval(model, task, problems, DIRECT, max_new))
    po = summarise(rollout_eval(model, task, problems, None, max_new))
    rows = []
    for t in ("all", *TIERS):
        rows.append(
            {
                "tier": t,
                "forced_cot_epdms": th[f"epdms_{t}"],
                "forced_direct_epdms": di[f"epdms_{t}"],
                "gap_epdms": th[f"epdms_{t}"] - di[f"epdms_{t}"],
                "forced_cot_pdms": th[f"pdms_{t}"],
                "forced_direct_pdms": di[f"pdms_{t}"],
                "gap_pdms": th[f"pdms_{t}"] - di[f"pdms_{t}"],
                "sft_router_epdms": po[f"epdms_{t}"],
                "sft_router_cot": po[f"cot_{t}"],
                "cot_tokens": th[f"tokens_{t}"],
                "direct_tokens": di[f"tokens_{t}"],
            }
        )
    return rows


def sft_build(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """Build (or load) the SFT checkpoint and measure the pre-RL gate on ``n_eval_final`` held-out scenes."""
    cfg = _setup(params)
    res = _checkpoint(cfg, reporter)
    reporter.progress(0.9, "gate: forced-CoT vs forced-direct per tier")
    rows = gate_rows(res.model, res.task, final_problems(cfg, res.task), cfg.max_new)
    reporter.table("gate", rows)
    by = {r["tier"]: r for r in rows}
    for r in rows:
        reporter.scalars(0, {f"gate/gap_{r['tier']}": r["gap_epdms"]})
    reporter.progress(1.0, f"SFT checkpoint ready ({'cache hit' if res.cached else 'built'})")
    return {
        "checkpoint": res.path.name,
        "cached": res.cached,
        "val_loss": res.meta["val_loss"],
        "gate_gap_hard": by["hard"]["gap_epdms"],
        "gate_gap_easy": by["easy"]["gap_epdms"],
        "sft_cot_ratio": by["all"]["sft_router_cot"],
    }


def train_one(
    cfg: SteerConfig,
    res: Any,
    method: str,
    lam: float,
    seed: int,
    reporter: Any,
    problems: list[Any],
    stream: bool = True,
) -> dict[str, Any]:
    """One RL run from a fresh copy of the SFT weights; returns the final held-out summary (+ history)."""
    import copy

    model = copy.deepcopy(res.model)
    plugin = cfg.plugin(method, lam)
    if cfg.route_head_lr > 0:
        attach_route_head(model, new_route_head(model, res.task, seed))
    trainer = SteerTrainer(
        model, res.task, cfg.grpo(seed), [plugin], route=FORCED.get(method), route_lr=cfg.route_head_lr
    )
    rep = reporter if stream else None
    if stream:
        reporter.scalars(0, trainer.evaluate())
    t0 = time.perf_counter()
    history = trainer.train(rep)
    seconds = time.perf_counter() - t0
    rows = rollout_eval(model, res.task, problems, FORCED.get(method), cfg.max_new)
    s = summarise(rows)
    s["reward"] = float(np.mean([r["reward"] for r in rows]))
    tier_idx = np.array([TIERS.index(r["tier"]) for r in rows])
    s["spearman_tier_cot"] = spearman(tier_idx, np.array([r["p_c"] for r in rows]))
    s["seconds_per_step"] = seconds / max(1, len(history))
    s["steps"] = len(history)
    return {"summary": s, "rows": rows, "history": history, "plugin": plugin, "model": model}


def _scatter_fig(points: list[tuple[float, float, str]]) -> dict[str, Any]:
    data = []
    for t in TIERS:
        pts = [(p, d) for p, d, tt in points if tt == t]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": t,
                "x": [p for p, _ in pts],
                "y": [d for _, d in pts],
                "marker": {"color": TIER_COLORS[t], "size": 5, "opacity": 0.6},
            }
        )
    return {"data": data, "layout": {"xaxis": {"title": "p_c (π_old)"}, "yaxis": {"title": "realised Δ"}}}


def route_rl(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """E1: one method from the cached SFT checkpoint, streamed live; per-tier final table."""
    cfg = _setup(params)
    if cfg.method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}")
    res = _checkpoint(cfg, reporter)
    problems = final_problems(cfg, res.task)
    sft_rows = rollout_eval(res.model, res.task, problems, FORCED.get(cfg.method), cfg.max_new)
    sft = summarise(sft_rows)
    out = train_one(cfg, res, cfg.method, cfg.lam, cfg.seed, reporter, problems)
    s, rows, plugin = out["summary"], out["rows"], out["plugin"]
    table = []
    for t in ("all", *TIERS):
        table.append(
            {
                "tier": t,
                "epdms_sft": sft[f"epdms_{t}"],
                "epdms": s[f"epdms_{t}"],
                "pdms_sft": sft[f"pdms_{t}"],
                "pdms": s[f"pdms_{t}"],
                "cot_ratio_sft": sft[f"cot_{t}"],
                "cot_ratio": s[f"cot_{t}"],
                "p_c": s[f"pc_{t}"],
                "tokens_sft": sft[f"tokens_{t}"],
                "tokens": s[f"tokens_{t}"],
            }
        )
    reporter.table("per_tier", table)
    conf = []
    for route in (THINK, DIRECT):
        row: dict[str, Any] = {"route": route}
        for t in TIERS:
            row[t] = sum(1 for r in rows if r["tier"] == t and r["route"] == route)
        conf.append(row)
    reporter.table("confusion", conf)
    reporter.figure("pc_vs_delta", _scatter_fig(plugin.scatter))
    reporter.figure("pc_hist", pc_hist_fig(rows, "p_c on held-out scenes"))
    summary = {
        "method": cfg.method,
        "epdms": s["epdms_all"],
        "pdms": s["pdms_all"],
        "tokens": s["tokens_all"],
        "cot_easy": s["cot_easy"],
        "cot_medium": s["cot_medium"],
        "cot_hard": s["cot_hard"],
        "epdms_hard": s["epdms_hard"],
        "spearman_tier_pc": s["spearman_tier_cot"],
        "sft_epdms": sft["epdms_all"],
        "sft_tokens": sft["tokens_all"],
        "seconds_per_step": s["seconds_per_step"],
        "n_eval_final": len(problems),
    }
    summary["policy"] = save_policy(out["model"], cfg, res, summary, reporter.data_dir)
    reporter.table("summary", [summary])
    return summary


_NOT_IN_KEY = ("device", "threads")


# fields added after policies were saved, with the value every earlier policy implicitly had
_ADDED_FIELD_DEFAULTS: dict[str, Any] = {
    "scenes": "v1",
    "cot_weight": 1.0,
    "cot_aux": 0,
    "route_detach": False,
    "route_head_lr": 0.0,
}


def policy_name(cfg: SteerConfig) -> str:
    """``<method>-s<seed>-<hash>``: the hash covers every RL and checkpoint parameter (not device or threads)."""
    d = {k: v for k, v in asdict(cfg).items() if k not in _NOT_IN_KEY}
    for k, v in _ADDED_FIELD_DEFAULTS.items():  # at its neutral value a later field leaves earlier names unchanged
        if d[k] == v:
            del d[k]
    return f"{cfg.method}-s{cfg.seed}-" + hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]


def save_policy(model: Any, cfg: SteerConfig, res: Any, summary: dict[str, Any], data_dir: Any) -> str:
    """Keep an E1 run's final policy (for E3) under ``data_dir/steer/policies/<name>.pt`` with its SFT config,
    RL parameters and final summary; atomic write.  Returns the name."""
    name = policy_name(cfg)
    path = Path(data_dir) / POLICY_DIR / f"{name}.pt"
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = {
        "sft": asdict(cfg.sft_config()),
        "sft_checkpoint": res.path.name,
        "params": {k: v for k, v in asdict(cfg).items() if k not in _NOT_IN_KEY},
        "summary": dict(summary),
        "state_dict": model.state_dict(),
    }
    if route_head(model) is not None:
        blob["route_head"] = route_head(model).state_dict()
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save(blob, tmp)
    os.replace(tmp, path)
    return name


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points not dominated (fewer-or-equal tokens and higher-or-equal score, one strictly)."""
    front = []
    for i, (ti, si) in enumerate(points):
        dom = any((tj <= ti and sj >= si) and (tj < ti or sj > si) for j, (tj, sj) in enumerate(points) if j != i)
        if not dom:
            front.append(i)
    return front


def pareto(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """E2: methods × λ, plus always-/never-CoT, × seeds; score against mean generated tokens."""
    cfg = _setup(params)
    methods = [m.strip() for m in cfg.methods.split(",") if m.strip()]
    lams = [float(x) for x in cfg.lams.split(",") if x.strip()]
    res = _checkpoint(cfg, reporter)
    problems = final_problems(cfg, res.task)
    jobs = [(m, lam) for m in methods for lam in lams] + [("always_cot", 0.0), ("never_cot", 0.0)]
    jobs = [(m, lam, cfg.seed + k) for m, lam in jobs for k in range(cfg.n_seeds)]
    rows: list[dict[str, Any]] = []
    for i, (m, lam, seed) in enumerate(jobs):
        reporter.progress(i / len(jobs), f"{METHOD_LABELS[m]} λ={lam:g} seed {seed}")
        out = train_one(cfg, res, m, lam, seed, reporter, problems, stream=False)
        s = out["summary"]
        hist = out["history"]
        name = f"{m}@{lam:g}" if m in ("steer", "length_penalty", "adathink", "grpo") else m
        for k, h in enumerate(hist):
            if "tokens/per_scene" in h:
                reporter.scalar(f"cmp_tokens/{name}", k + 1, h["tokens/per_scene"])
            if "train/score" in h:
                reporter.scalar(f"cmp_score/{name}", k + 1, h["train/score"])
        rows.append(
            {
                "method": m,
                "lam": lam,
                "seed": seed,
                "epdms": s["epdms_all"],
                "pdms": s["pdms_all"],
                "tokens": s["tokens_all"],
                "epdms_hard": s["epdms_hard"],
                "cot_easy": s["cot_easy"],
                "cot_medium": s["cot_medium"],
                "cot_hard": s["cot_hard"],
                "seconds_per_step": s["seconds_per_step"],
            }
        )
        reporter.table("runs", rows)
        if reporter.should_stop():
            break
    front = pareto_front([(r["tokens"], r["epdms"]) for r in rows])
    for i, r in enumerate(rows):
        r["on_front"] = i in front
    reporter.table("runs", rows)
    data = []
    for m in dict.fromkeys(r["method"] for r in rows):
        rs = [r for r in rows if r["method"] == m]
        data.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "name": METHOD_LABELS[m],
                "x": [r["tokens"] for r in rs],
                "y": [r["epdms"] for r in rs],
                "text": [f"λ={r['lam']:g}" if m in ("steer", "length_penalty") else "" for r in rs],
                "textposition": "top center",
                "marker": {"size": 9},
            }
        )
    fr = sorted((rows[i]["tokens"], rows[i]["epdms"]) for i in front)
    data.append({"type": "scatter", "mode": "lines", "name": "front", "x": [a for a, _ in fr], "y": [b for _, b in fr]})
    reporter.figure(
        "pareto",
        {"data": data, "layout": {"xaxis": {"title": "mean generated tokens"}, "yaxis": {"title": "EPDMS-lite"}}},
    )
    reporter.progress(1.0, f"{len(rows)} runs")
    steer_on_front = any(rows[i]["method"] == "steer" for i in front)
    return {"runs": len(rows), "steer_on_front": steer_on_front, "front_size": len(front)}


def inspect(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """E3: a policy (the SFT checkpoint, or an E1 run's saved final weights) on ``n_eval_final`` held-out scenes:
    per-tier table, route × tier confusion, p_c histogram and the bird's-eye viewer of ``n_view`` scenes."""
    cfg = _setup(params)
    name = str(params.get("policy", "sft")).strip() or "sft"
    route_mode = str(params.get("route", "router"))
    if route_mode not in ROUTES:
        raise ValueError(f"route must be one of {sorted(ROUTES)}")
    if name == "sft":
        res = _checkpoint(cfg, reporter)
        model, task, info = res.model, res.task, {"sft": res.path.name, "params": {}, "summary": {}}
    else:
        model, task, info = load_policy(name, reporter.data_dir, reporter, cfg.device)
        task.metric = cfg.metric
        if info["params"]:
            reporter.log(f"policy {name}: {info['params'].get('method')} from {info['sft']}")
    reporter.progress(0.2, f"evaluating {cfg.n_eval_final} held-out scenes")
    problems = final_problems(cfg, task)
    out = inspect_policy(model, task, problems, ROUTES[route_mode], cfg.max_new, int(params.get("n_view", 9)))
    reporter.table("per_tier", out["per_tier"])
    reporter.table("confusion", out["confusion"])
    reporter.table("scenes", out["scenes"])
    reporter.figure("viewer", out["viewer"])
    reporter.figure("pc_hist", out["hist"])
    audit: dict[str, float] = {}
    n_audit = int(params.get("audit_samples", 0))
    if n_audit > 0:
        reporter.progress(0.4, f"route audit: both routes forced, {n_audit} samples each")
        rows, audit = route_audit(
            model,
            task,
            problems,
            cfg.lam,
            n_audit,
            cfg.temperature,
            cfg.max_new,
            out["rows"],
            lambda f: reporter.progress(0.4 + 0.55 * f, "route audit"),
        )
        reporter.table("route_audit", rows)
        reporter.table(
            "route_audit_tiers",
            [
                {
                    "tier": t,
                    **{k: audit.get(f"{k}_{t}") for k in ("oracle_cot", "policy_cot", "agree")},
                    **{k: audit.get(f"{k}_greedy_{t}") for k in ("oracle", "forced_cot", "forced_direct")},
                }
                for t in (*TIERS, "all")
            ],
        )
        reporter.figure("audit", audit_fig(rows, cfg.lam))
    s = out["summary"]
    summary = {
        "policy": name,
        "sft_checkpoint": info["sft"],
        "route": route_mode,
        "scenes": len(problems),
        "epdms": s["epdms_all"],
        "pdms": s["pdms_all"],
        "tokens": s["tokens_all"],
        "cot_easy": s.get("cot_easy"),
        "cot_medium": s.get("cot_medium"),
        "cot_hard": s.get("cot_hard"),
        "p_c": s["pc_all"],
        "spearman_tier_pc": out["spearman"],
        "parsed": s["parsed"],
        **{k: audit[k] for k in ("oracle_cot_easy", "oracle_cot_medium", "oracle_cot_hard") if k in audit},
    }
    reporter.table("summary", [summary])
    reporter.progress(1.0, f"{name}: EPDMS-lite {s['epdms_all']:.3f} on {len(problems)} scenes")
    return summary

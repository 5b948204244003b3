"""Entry points: one STAPO / baseline run (spec stapo §3 experiments 1–2) and a seeded arm comparison (§3.3).

``stapo_run``      one arm: live entropy, accuracy at (T=1, p=1) and (T=0.7, p=0.9), mask rate vs ground-truth
                   spurious rate, detector precision/recall, masked-token types, late-collapse indicator, gradient
                   norm and clip fraction; at the end the gradient landscape ‖∇_z‖²/w² over (p, H) with this
                   run's positive-advantage tokens.
``stapo_compare``  arms × seeds from one cached SFT checkpoint; overlaid curves; mean ± 95 % CI per arm.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from compute.core.lm.sampling import generate
from compute.core.lm.sft import load_or_build
from compute.core.rl.trainer import GRPOTrainer
from compute.core.runtime import resolve_device, seed_everything
from compute.core.tasks import split_rng
from compute.stapo.config import ARM_LABELS, StapoConfig
from compute.stapo.mask import grad_sq_bounds
from compute.stapo.plugin import ARMS, StapoPlugin

DECODINGS = (("t10", 1.0, 1.0), ("t07", 0.7, 0.9))  # (key, temperature, top-p): the paper's two settings


@torch.no_grad()
def sampled_accuracy(
    model: Any, task: Any, problems: list[Any], temperature: float, top_p: float, n: int, max_new: int, seed: int
) -> float:
    """Mean reward of n samples per problem at (T, top-p), with a fixed generator (common random numbers)."""
    tok = task.tokenizer
    g = generate(
        model,
        [task.prompt(p) for p in problems],
        n=n,
        temperature=temperature,
        top_p=top_p,
        max_new=max_new,
        eos_id=tok.eos_id,
        pad_id=tok.pad_id,
        generator=torch.Generator(device=model.device).manual_seed(seed),
    )
    ok = 0
    for r in range(len(problems) * n):
        p = problems[int(g.source[r])] if g.source is not None else problems[r // n]
        ok += task.verify(p, tok.decode(g.response[r][g.response_mask[r] > 0].tolist()))[1]
    return ok / max(1, len(problems) * n)


class StapoTrainer(GRPOTrainer):
    """GRPOTrainer + linear lr warm-up (the core has no schedule) + sampled accuracy at both decoding settings
    and the late-collapse indicator max_{s≤t} acc_s − acc_t in ``evaluate``."""

    def __init__(self, *a: Any, warmup_steps: int = 0, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.warmup_steps = warmup_steps
        self.best: dict[str, float] = {}

    def train_step(self) -> tuple[dict[str, float], Any]:
        w = self.warmup_steps
        self.opt.param_groups[0]["lr"] = self.cfg.lr * (min(1.0, (self.state.step + 1) / w) if w else 1.0)
        stats, batch = super().train_step()
        stats["lr"] = self.opt.param_groups[0]["lr"]
        return stats, batch

    def evaluate(self, problems: list[Any] | None = None, batch: int = 256) -> dict[str, float]:
        out = super().evaluate(problems, batch)
        probs = problems if problems is not None else self.eval_problems[: self.cfg.n_eval]
        for key, t, p in DECODINGS:
            acc = sampled_accuracy(self.model, self.task, probs, t, p, 1, self.cfg.max_new, self.cfg.seed + 7)
            out[f"acc/{key}"] = acc
            self.best[key] = max(self.best.get(key, 0.0), acc)
            out[f"collapse/{key}"] = self.best[key] - acc
        return out


def _setup(params: dict[str, Any]) -> StapoConfig:
    cfg = StapoConfig.from_params(params)
    cfg.device = resolve_device(cfg.device)
    if "threads" in params:
        torch.set_num_threads(max(1, int(params["threads"])))
    seed_everything(cfg.seed)
    return cfg


def entropy_stability(ent: list[float], early: int = 10) -> dict[str, float]:
    """H_early = mean of the first ``early`` steps; max |H_t/H_early − 1| over the second half; H_last/H_early
    (last 10 % of steps averaged)."""
    e = np.asarray(ent, dtype=float)
    if len(e) == 0:
        return {"H_early": float("nan"), "H_dev_max": float("nan"), "H_final_ratio": float("nan")}
    h0 = float(e[: max(1, min(early, len(e)))].mean())
    tail = e[len(e) // 2 :]
    last = float(e[-max(1, len(e) // 10) :].mean())
    return {"H_early": h0, "H_dev_max": float(np.abs(tail / h0 - 1).max()), "H_final_ratio": last / h0}


def landscape_figure(V: int, sample: dict[str, np.ndarray] | None, title: str) -> dict[str, Any]:
    """Heatmap of the lower bound 1 − 2p + e^{−H} of ‖∇_z‖²/w² over (log10 p, H), the upper bound as contours,
    and the sampled positive-advantage tokens (S2T-detected in red) at their exact ‖∇_z‖²/w²."""
    lp = np.linspace(-4, 0, 41)
    H = np.linspace(0, math.log(V), 31)
    P, HH = np.meshgrid(10**lp, H)
    lo, hi = grad_sq_bounds(torch.tensor(P), torch.tensor(HH), V)
    data: list[dict[str, Any]] = [
        {
            "type": "heatmap",
            "x": lp.tolist(),
            "y": H.tolist(),
            "z": lo.numpy().round(4).tolist(),
            "colorscale": "Viridis",
            "colorbar": {"title": "lower bound"},
            "name": "1 − 2p + e^{−H}",
        },
        {
            "type": "contour",
            "x": lp.tolist(),
            "y": H.tolist(),
            "z": hi.numpy().round(4).tolist(),
            "contours": {"coloring": "lines", "showlabels": True},
            "showscale": False,
            "name": "upper bound",
        },
    ]
    if sample is not None and len(sample["p"]):
        for sel, name, color in ((~sample["masked"], "kept tokens", "white"), (sample["masked"], "S2T-masked", "red")):
            if sel.any():
                data.append(
                    {
                        "type": "scatter",
                        "mode": "markers",
                        "name": name,
                        "x": np.log10(np.clip(sample["p"][sel], 1e-4, 1)).round(4).tolist(),
                        "y": sample["H"][sel].round(4).tolist(),
                        "text": [f"‖∇‖²/w² = {g:.3f}" for g in sample["g2"][sel]],
                        "marker": {"size": 5, "color": color, "line": {"width": 0.5, "color": "black"}},
                    }
                )
    return {"data": data, "layout": {"title": title, "xaxis": {"title": "log10 π(y)"}, "yaxis": {"title": "H (nats)"}}}


def _one_run(
    cfg: StapoConfig, arm: str, seed: int, reporter: Any, prefix: str | None = None, frac: tuple[float, float] = (0, 1)
) -> tuple[dict[str, Any], list[dict[str, float]], StapoPlugin, int]:
    """Train one arm from the cached SFT checkpoint; stream under the core's keys (prefix None) or as
    ``cmp_<metric>/<prefix>`` (comparison)."""
    res = load_or_build(cfg.sft(), reporter.data_dir, reporter, cfg.device)
    torch.manual_seed(seed)
    plugin = StapoPlugin(arm, cfg.tau_p, cfg.q, grad_every=cfg.grad_every, seed=seed)
    gcfg = cfg.grpo(arm, seed)
    if prefix is not None:
        gcfg = replace(gcfg, record_every=0)
    tr = StapoTrainer(res.model, res.task, gcfg, [plugin], warmup_steps=cfg.warmup_steps)
    first = tr.evaluate()
    if prefix is None:
        reporter.scalars(0, first)
    else:
        reporter.scalars(0, {f"cmp_acc_t10/{prefix}": first["acc/t10"], f"cmp_acc_t07/{prefix}": first["acc/t07"]})
    history: list[dict[str, float]] = []
    t0 = time.perf_counter()
    for s in range(cfg.steps):
        tr.state.step = s
        stats, batch = tr.train_step()
        if (cfg.eval_every and (s + 1) % cfg.eval_every == 0) or s == cfg.steps - 1:
            stats.update(tr.evaluate())
        history.append(stats)
        if prefix is None:
            reporter.scalars(s + 1, stats)
            if gcfg.record_every and (s % gcfg.record_every == 0 or s == cfg.steps - 1) and len(batch):
                reporter.artifact(f"tokens/step{s + 1:05d}.npz", tr.token_records(batch))
        else:
            keys = {
                "entropy/mean": "cmp_entropy",
                "acc/t10": "cmp_acc_t10",
                "acc/t07": "cmp_acc_t07",
                "s2t/mask_rate": "cmp_mask",
                "reward/train": "cmp_reward",
                "s2t/grad_share": "cmp_grad_share",
            }
            reporter.scalars(s + 1, {f"{v}/{prefix}": stats[k] for k, v in keys.items() if k in stats})
        f = frac[0] + (frac[1] - frac[0]) * (s + 1) / cfg.steps
        reporter.progress(
            f,
            f"{ARM_LABELS[arm]} seed {seed}: step {s + 1}/{cfg.steps}, H {stats.get('entropy/mean', float('nan')):.3f}",
        )
        if reporter.should_stop():
            reporter.log(f"stopped after {s + 1} steps")
            break
    seconds = time.perf_counter() - t0
    final = res.task.sample(cfg.n_eval_final, split_rng(10_000, "test"), "test")
    summary: dict[str, Any] = {"arm": ARM_LABELS[arm], "seed": seed, "steps": len(history)}
    for key, t, p in DECODINGS:
        summary[f"acc_{key}"] = sampled_accuracy(tr.model, res.task, final, t, p, 2, cfg.max_new, 12345)
    evals = [h for h in history if "acc/t10" in h]
    for key, _, _ in DECODINGS:
        summary[f"collapse_{key}"] = evals[-1][f"collapse/{key}"] if evals else float("nan")
    summary.update(entropy_stability([h.get("entropy/mean", float("nan")) for h in history]))
    tot = plugin.totals
    summary["cum_mask_rate"] = tot["silenced"] / max(1.0, tot["valid"])
    # pooled over the run (the per-step means below weight steps with one detection like steps with many)
    summary["detected_known"] = tot["det_known"]
    summary["pooled_precision"] = tot["det_spurious"] / tot["det_known"] if tot["det_known"] else float("nan")
    summary["pooled_recall"] = tot["det_spurious"] / tot["spurious"] if tot["spurious"] else float("nan")
    for k in ("precision", "recall", "gt_rate", "enrichment", "grad_share", "grad_ratio"):
        vals = [h[f"s2t/{k}"] for h in history if f"s2t/{k}" in h and h[f"s2t/{k}"] == h[f"s2t/{k}"]]
        summary[k] = float(np.mean(vals)) if vals else float("nan")
    summary["seconds_per_step"] = seconds / max(1, len(history))
    return summary, history, plugin, res.model.cfg.vocab_size


def stapo_run(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """One arm (spec stapo §3.1) plus the gradient landscape of its last analysed batch (§3.2)."""
    cfg = _setup(params)
    if cfg.arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}")
    summary, _, plugin, V = _one_run(cfg, cfg.arm, cfg.seed, reporter)
    reporter.figure("landscape", landscape_figure(V, plugin.sample, f"‖∇_z‖²/w² over (p, H), V = {V}"))
    reporter.table("summary", [summary])
    return {k: v for k, v in summary.items() if isinstance(v, (int, float))}


def _ci(x: list[float]) -> tuple[float, float]:
    """Mean and 95 % t half-width (0 for one value)."""
    a = np.asarray([v for v in x if v == v], dtype=float)
    if len(a) == 0:
        return float("nan"), float("nan")
    if len(a) == 1:
        return float(a[0]), 0.0
    from scipy import stats

    return float(a.mean()), float(stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a)))


def stapo_compare(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """Arms × seeds with shared seeds and one SFT checkpoint (spec stapo §3.3); mean ± 95 % CI per arm."""
    cfg = _setup(params)
    arms = [a.strip() for a in cfg.arms.split(",") if a.strip()]
    bad = [a for a in arms if a not in ARMS]
    if bad:
        raise ValueError(f"unknown arms {bad}; choose from {ARMS}")
    # the shared starting point: the SFT checkpoint's final-evaluation accuracy (same problems, samples, generator)
    res = load_or_build(cfg.sft(), reporter.data_dir, reporter, cfg.device)
    final = res.task.sample(cfg.n_eval_final, split_rng(10_000, "test"), "test")
    start = {"model": "SFT checkpoint (step 0)"}
    for key, t, p in DECODINGS:
        start[f"acc_{key}"] = sampled_accuracy(res.model, res.task, final, t, p, 2, cfg.max_new, 12345)
    reporter.table("start", [start])
    runs: list[dict[str, Any]] = []
    total = len(arms) * cfg.n_seeds
    k = 0
    for s in range(cfg.n_seeds):
        for arm in arms:
            seed = cfg.seed + s
            summary, _, _, _ = _one_run(cfg, arm, seed, reporter, f"{arm}_s{seed}", (k / total, (k + 1) / total))
            runs.append(summary)
            reporter.table("runs", runs)
            k += 1
            if reporter.should_stop():
                break
        if reporter.should_stop():
            break
    rows = []
    for arm in arms:
        rs = [r for r in runs if r["arm"] == ARM_LABELS[arm]]
        row: dict[str, Any] = {"arm": ARM_LABELS[arm], "n": len(rs)}
        for key in (
            "acc_t10",
            "acc_t07",
            "H_final_ratio",
            "H_dev_max",
            "collapse_t10",
            "collapse_t07",
            "cum_mask_rate",
            "precision",
            "enrichment",
            "pooled_precision",
            "pooled_recall",
        ):
            m, h = _ci([r[key] for r in rs])
            row[key] = m
            row[f"{key}_ci"] = h
        rows.append(row)
    reporter.table("summary", rows)
    paired = paired_differences(runs, arms)
    reporter.table("paired", paired)
    out: dict[str, Any] = {}
    for row in rows:
        for key in ("acc_t10", "acc_t07", "H_final_ratio", "cum_mask_rate"):
            out[f"{row['arm']}:{key}"] = row[key]
    for key, _, _ in DECODINGS:
        out[f"SFT:acc_{key}"] = start[f"acc_{key}"]
    for row in paired:
        out[f"{row['reference']}-{row['arm']}:acc_t10"] = row["d_acc_t10"]
        out[f"{row['reference']}-{row['arm']}:acc_t07"] = row["d_acc_t07"]
    return out


def paired_differences(runs: list[dict[str, Any]], arms: list[str]) -> list[dict[str, Any]]:
    """Per seed, reference arm (STAPO if present, else the first) minus each other arm, at both decodings, and the
    per-seed difference of those gaps (gap at T = 1 minus gap at T = 0.7); mean and 95 % t half-width over seeds."""
    ref = "stapo" if "stapo" in arms else arms[0]
    by = {(r["arm"], r["seed"]): r for r in runs}
    rows = []
    for arm in arms:
        if arm == ref:
            continue
        seeds = sorted(s for (a, s) in by if a == ARM_LABELS[arm] and (ARM_LABELS[ref], s) in by)
        row: dict[str, Any] = {"reference": ARM_LABELS[ref], "arm": ARM_LABELS[arm], "n": len(seeds)}
        d = {
            key: [by[(ARM_LABELS[ref], s)][f"acc_{key}"] - by[(ARM_LABELS[arm], s)][f"acc_{key}"] for s in seeds]
            for key, _, _ in DECODINGS
        }
        d["gap"] = [a - b for a, b in zip(d["t10"], d["t07"], strict=True)]
        for key, vals in d.items():
            name = "gap_t10_minus_t07" if key == "gap" else f"d_acc_{key}"
            row[name], row[f"{name}_ci"] = _ci(vals)
        row["wins_t10"] = sum(v > 0 for v in d["t10"])
        row["wins_t07"] = sum(v > 0 for v in d["t07"])
        rows.append(row)
    return rows

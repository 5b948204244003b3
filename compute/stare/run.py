"""Entry points: one STARE / baseline training run with the entropy analysis, and a seeded method comparison.

``stare_run``   spec stare §3 experiments 1 and 2 (training + four-quadrant analysis, measured vs predicted ΔH);
``stare_compare``  experiment 3 (methods × seeds on one SFT checkpoint, overlaid curves, mean ± 95 % CI).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from compute.core.lm.model import TinyLM, positions_from_valid
from compute.core.lm.sft import greedy_accuracy, load_or_build
from compute.core.rl.plugins import Plugin
from compute.core.rl.trainer import GRPOConfig, GRPOTrainer, RolloutBatch
from compute.core.runtime import resolve_device, seed_everything
from compute.core.tasks import split_rng
from compute.stare.config import METHODS, StareRunConfig
from compute.stare.entropy import (
    QUADRANTS,
    entropy_from_logits,
    entropy_logit_gradient,
    entropy_sensitivity,
    quadrant_index,
)
from compute.stare.plugin import ClipCovPlugin, KLCovPlugin, StarePlugin, select_top_surprisal


def response_logits(model: TinyLM, batch: RolloutBatch, temperature: float = 1.0) -> torch.Tensor:
    """Logits / T at every response position [N, R, V] (the forward of ``logp_entropy``), no grad, eval mode."""
    P, R = batch.prompt.shape[1], batch.response.shape[1]
    inp = torch.cat([batch.prompt, batch.response[:, :-1]], dim=1)
    valid = torch.cat([batch.prompt_mask.bool(), torch.ones(len(batch), R - 1, dtype=torch.bool)], dim=1)
    was = model.training
    model.eval()
    with torch.no_grad():
        z = model(inp, positions_from_valid(valid), valid)[:, P - 1 :].float()
    model.train(was)
    return z / (temperature if temperature > 0 else 1.0)


def _corr(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    d = float((x * x).sum())
    return float((x * y).sum() / d) if d > 0 else float("nan")


def entropy_change_analysis(
    z0: torch.Tensor, z1: torch.Tensor, batch: RolloutBatch, frac: float = 0.1
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Measured ΔH_t = H(z1_t) − H(z0_t) (same batch, eval mode, before/after the update) against

    * the paper's first-order prediction A_t·S(o_t; π_t) (per unit step; η_eff = least-squares slope), and
    * the logit-space linearisation ∇_z H · (z1 − z0) (slope → 1 as the step → 0),

    per advantage × surprisal quadrant (counts share, summed predicted and measured ΔH per valid token)."""
    m = batch.response_mask.bool() & (batch.adv != 0)
    h0 = entropy_from_logits(z0)
    dh = entropy_from_logits(z1) - h0
    S = entropy_sensitivity(z0, batch.response)
    pred = batch.adv * S
    lin = (entropy_logit_gradient(z0) * (z1 - z0)).sum(-1)
    surpr = -torch.log_softmax(z0, -1).gather(-1, batch.response[..., None]).squeeze(-1)
    q = quadrant_index(batch.adv, surpr, h0)
    n = max(1, int(m.sum()))
    out: dict[str, float] = {}
    x, y, xl = pred[m].numpy(), dh[m].numpy(), lin[m].numpy()
    out["dH/corr_AS"] = _corr(x, y)
    out["dH/eta_eff"] = _slope(x, y)
    out["dH/corr_lin"] = _corr(xl, y)
    out["dH/slope_lin"] = _slope(xl, y)
    out["dH/measured_mean"] = float(dh[m].mean()) if m.any() else 0.0
    out["dH/pred_mean"] = float(pred[m].mean()) if m.any() else 0.0
    agree = 0
    for i, name in enumerate(QUADRANTS):
        qi = m & (q == i)
        out[f"quad_count/{name}"] = float(qi.sum()) / n
        out[f"quad_pred/{name}"] = float(pred[qi].sum()) / n
        out[f"quad_meas/{name}"] = float(dh[qi].sum()) / n
        agree += int(np.sign(out[f"quad_pred/{name}"]) == np.sign(out[f"quad_meas/{name}"]))
    out["dH/quadrant_sign_agree"] = agree / 4
    lpos = select_top_surprisal(surpr, m & (batch.adv > 0), frac)
    out["dH/Lpos_pred_positive"] = float((pred[lpos] > 0).float().mean()) if lpos.any() else float("nan")
    keep = min(400, len(x))
    sample = {"pred": x[:keep], "meas": y[:keep], "lin": xl[:keep], "quad": q[m].numpy()[:keep]}
    return out, sample


class AnalysisTrainer(GRPOTrainer):
    """GRPOTrainer that, every ``analysis_every`` steps, recomputes the batch's per-token entropy before and after
    the update (same batch, eval mode) and reports the first-order analysis.  (The core has no pre/post-update hook;
    this subclass wraps ``update``.)"""

    def __init__(self, *a: Any, analysis_every: int = 0, frac: float = 0.1, reporter: Any = None, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.analysis_every = analysis_every
        self.frac = frac
        self.reporter = reporter
        self.last_sample: dict[str, np.ndarray] | None = None

    def update(self, batch: RolloutBatch) -> dict[str, float]:
        due = self.analysis_every and self.state.step % self.analysis_every == 0
        if not due:
            return super().update(batch)
        z0 = response_logits(self.model, batch, self.cfg.temperature)
        stats = super().update(batch)
        z1 = response_logits(self.model, batch, self.cfg.temperature)
        extra, self.last_sample = entropy_change_analysis(z0, z1, batch, self.frac)
        stats.update(extra)
        if self.reporter is not None:
            self.reporter.figure("dH_scatter", scatter_figure(self.last_sample, self.state.step + 1))
        return stats


def scatter_figure(sample: dict[str, np.ndarray], step: int) -> dict[str, Any]:
    """Plotly scatter of measured ΔH against A·S, coloured by quadrant."""
    data = []
    for i, name in enumerate(QUADRANTS):
        sel = sample["quad"] == i
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "x": [float(v) for v in sample["pred"][sel]],
                "y": [float(v) for v in sample["meas"][sel]],
                "marker": {"size": 4},
            }
        )
    return {
        "data": data,
        "layout": {
            "title": f"measured ΔH vs A·S (step {step})",
            "xaxis": {"title": "A·S(a; π) (first-order, per unit step)"},
            "yaxis": {"title": "measured ΔH (nats)"},
        },
    }


def make_plugins(cfg: StareRunConfig) -> tuple[list[Plugin], StarePlugin]:
    """The method's plug-ins; every method carries a STARE plug-in (a monitor for the baselines) so the
    target band and the would-be gate state are reported for all."""
    if cfg.method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}")
    stare = StarePlugin(cfg.settings())
    plugins: list[Plugin] = [stare]
    if cfg.method == "clip_cov":
        plugins.append(ClipCovPlugin(cfg.cov_ratio, seed=cfg.seed))
    elif cfg.method == "kl_cov":
        plugins.append(KLCovPlugin(cfg.cov_ratio))
    return plugins, stare


def _setup(params: dict[str, Any]) -> StareRunConfig:
    cfg = StareRunConfig.from_params(params)
    cfg.device = resolve_device(cfg.device)
    if "threads" in params:
        torch.set_num_threads(max(1, int(params["threads"])))
    seed_everything(cfg.seed)
    return cfg


def band_stats(history: list[dict[str, float]], h_tgt: float, tol: float = 0.2) -> dict[str, float]:
    """Gate duty cycle; share of steps with H̄ within ±tol·H_tgt after H̄ first reaches H_tgt (nan if never)."""
    ent = np.array([h.get("entropy/mean", np.nan) for h in history])
    gate = np.array([h.get("stare/gate", 0.0) for h in history])
    reached = np.nonzero(ent <= h_tgt)[0] if h_tgt > 0 else np.array([], dtype=int)
    within = float("nan")
    if len(reached):
        tail = ent[reached[0] :]
        within = float(np.mean(np.abs(tail - h_tgt) <= tol * h_tgt))
    return {
        "gate_duty": float(gate.mean()) if len(gate) else 0.0,
        "band_reached_step": float(reached[0] + 1) if len(reached) else float("nan"),
        "within_band_after_reach": within,
    }


def train_one(cfg: StareRunConfig, reporter: Any, res: Any = None, log_prefix: str = "") -> dict[str, Any]:
    """One method from the (cached) SFT checkpoint; returns the summary (and streams every step to ``reporter``)."""
    if res is None:
        res = load_or_build(cfg.sft(), reporter.data_dir, reporter, cfg.device)
        reporter.log(f"SFT checkpoint {res.path.name} ({'cache hit' if res.cached else 'built now'})")
    model = TinyLM(res.model.cfg)
    model.load_state_dict(res.model.state_dict())
    model.eval()
    seed_everything(cfg.seed)
    plugins, stare = make_plugins(cfg)
    gcfg: GRPOConfig = cfg.method_grpo()
    trainer = AnalysisTrainer(
        model, res.task, gcfg, plugins, analysis_every=cfg.analysis_every, frac=cfg.frac, reporter=reporter
    )
    final_problems = res.task.sample(cfg.n_eval_final, split_rng(cfg.seed + 10_000, "test"), "test")
    acc0 = greedy_accuracy(model, res.task, final_problems, cfg.max_new)
    reporter.scalars(0, trainer.evaluate())
    t0 = time.perf_counter()
    history = trainer.train(reporter)
    seconds = time.perf_counter() - t0
    acc1 = greedy_accuracy(trainer.model, res.task, final_problems, cfg.max_new)
    h_tgt = float(stare.h_tgt or 0.0)
    last = history[-max(1, len(history) // 5) :]  # late training: last 20 % of steps
    summary: dict[str, Any] = {
        "method": cfg.method,
        "seed": cfg.seed,
        "sft_heldout_acc": acc0,
        "final_heldout_acc": acc1,
        "n_eval_final": len(final_problems),
        "H_sft": h_tgt / cfg.kappa if cfg.target_entropy <= 0 and cfg.kappa > 0 else float("nan"),
        "H_tgt": h_tgt,
        "final_entropy": float(np.mean([h["entropy/mean"] for h in last if "entropy/mean" in h])),
        "final_length": float(np.mean([h["length/mean"] for h in last if "length/mean" in h])),
        "steps": len(history),
        "seconds_per_step": seconds / max(1, len(history)),
        **band_stats(history, h_tgt),
    }
    pk = [h["pass/at8"] for h in history if "pass/at8" in h]
    if pk:
        summary["final_pass_at8"] = pk[-1]
    an = [h for h in history if "dH/corr_AS" in h]
    if an:
        for k in ("dH/corr_AS", "dH/corr_lin", "dH/slope_lin", "dH/quadrant_sign_agree", "dH/Lpos_pred_positive"):
            vals = [h[k] for h in an if math.isfinite(h[k])]
            summary[k.replace("/", "_")] = float(np.mean(vals)) if vals else float("nan")
    return summary


def stare_run(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """Experiment 1/2: one method (STARE-O1/C2 or a baseline) with live entropy, band, gate and (optionally) the
    four-quadrant measured-vs-predicted ΔH analysis."""
    cfg = _setup(params)
    summary = train_one(cfg, reporter)
    reporter.table("summary", [summary])
    if any(k.startswith("dH_") for k in summary):
        rows = [{"quantity": k, "value": v} for k, v in summary.items() if k.startswith("dH_")]
        reporter.table("analysis", rows)
    return summary


METHOD_SETS = {
    "core": ("grpo_ds", "dapo", "stare_o1", "stare_c2"),
    "stare_vs_grpo": ("grpo_ds", "stare_o1"),
    "c2_vs_grpo": ("grpo_ds", "stare_c2"),
    "all": METHODS,
}

_OVERLAY = {
    "entropy/mean": "cmp_entropy",
    "acc/heldout": "cmp_acc",
    "reward/train": "cmp_reward",
    "length/mean": "cmp_length",
    "stare/gate": "cmp_gate",
}


class _Overlay:
    """Forwards a run's reporting to the comparison's reporter, renaming the overlaid series to
    ``cmp_<quantity>/<method>_s<seed>`` and dropping the rest (tables, figures and artifacts stay per run)."""

    def __init__(self, inner: Any, label: str, offset: float = 0.0, share: float = 1.0, band: bool = False) -> None:
        self.inner, self.label, self.offset, self.share, self.band = inner, label, offset, share, band
        self.data_dir = inner.data_dir

    def scalars(self, step: float, values: dict[str, float]) -> None:
        out = {f"{_OVERLAY[k]}/{self.label}": v for k, v in values.items() if k in _OVERLAY}
        if "band/H_tgt" in values and self.band:  # one run draws the (shared) target line
            out["cmp_entropy/H_tgt"] = values["band/H_tgt"]
        if out:
            self.inner.scalars(step, out)

    def progress(self, fraction: float, message: str = "") -> None:
        self.inner.progress(self.offset + self.share * fraction, f"{self.label}: {message}")

    def should_stop(self) -> bool:
        return self.inner.should_stop()

    def log(self, message: str, level: str = "info") -> None:
        self.inner.log(f"{self.label}: {message}")

    def scalar(self, *a: Any, **k: Any) -> None:
        pass

    def figure(self, *a: Any, **k: Any) -> None:
        pass

    def table(self, *a: Any, **k: Any) -> None:
        pass

    def artifact(self, *a: Any, **k: Any) -> None:
        pass


def _ci95(x: list[float]) -> tuple[float, float]:
    """Mean and the half-width of a normal-approximation 95 % CI (t-quantile for n ≤ 10)."""
    a = np.asarray([v for v in x if math.isfinite(v)], dtype=float)
    if len(a) == 0:
        return float("nan"), float("nan")
    if len(a) == 1:
        return float(a[0]), float("nan")
    from scipy.stats import t

    return float(a.mean()), float(t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a)))


def stare_compare(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """Experiment 3: methods × seeds from one SFT checkpoint; overlaid entropy / accuracy / length / gate curves;
    per-method mean ± 95 % CI of the final held-out greedy accuracy, pass@8 and late entropy."""
    cfg = _setup(params)
    methods = METHOD_SETS[cfg.methods]
    res = load_or_build(cfg.sft(), reporter.data_dir, reporter, cfg.device)
    reporter.log(f"SFT checkpoint {res.path.name} ({'cache hit' if res.cached else 'built now'})")
    runs: list[dict[str, Any]] = []
    n = len(methods) * cfg.n_seeds
    for si in range(cfg.n_seeds):
        for mi, method in enumerate(methods):
            k = si * len(methods) + mi
            run_cfg = replace(cfg, method=method, seed=cfg.seed + si)
            ov = _Overlay(reporter, f"{method}_s{si}", k / n, 1 / n, band=k == 0)
            runs.append(train_one(run_cfg, ov, res))
            reporter.table("runs", runs)
            if reporter.should_stop():
                break
        if reporter.should_stop():
            break
    rows = []
    for method in methods:
        rr = [r for r in runs if r["method"] == method]
        if not rr:
            continue
        row: dict[str, Any] = {"method": method, "seeds": len(rr)}
        for key in ("final_heldout_acc", "final_pass_at8", "final_entropy", "gate_duty", "within_band_after_reach"):
            mu, ci = _ci95([r.get(key, float("nan")) for r in rr])
            row[key] = mu
            row[f"{key}_ci95"] = ci
        row["final_length"] = float(np.mean([r["final_length"] for r in rr]))
        rows.append(row)
    reporter.table("summary", rows)
    out: dict[str, Any] = {"sft_heldout_acc": runs[0]["sft_heldout_acc"] if runs else float("nan")}
    for r in rows:
        out[f"{r['method']}_acc"] = r["final_heldout_acc"]
        out[f"{r['method']}_entropy"] = r["final_entropy"]
    return out

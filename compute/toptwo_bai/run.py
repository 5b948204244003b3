"""Entry points of the toptwo_bai experiments: ``fn(params, reporter) -> summary``.

Each builds its config dataclass from the validated params, simulates R runs in lock-step with
``simulator.simulate`` and reports series/tables/figures under stable ``group/name`` keys.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from compute.core.reporter import Reporter, jsonable
from compute.core.runtime import seed_everything

from .characteristic import Allocation, t_star, t_star_beta
from .config import (
    ComparisonConfig,
    DiagnosticsConfig,
    ForcedExplorationConfig,
    LiveRunConfig,
    StoppingTimeConfig,
    resolve_means,
)
from .rules import forced_exploration_budget
from .simulator import BatchState, Sampler, log_checkpoints, simulate
from .stats import box_figure, ecdf_figure, tau_summary


def _reference(mu: np.ndarray, beta: float) -> tuple[Allocation, Allocation]:
    """(β-optimal allocation with T*_β, optimal allocation with T* and β*)."""
    return t_star_beta(mu, beta), t_star(mu)


def _instance_table(reporter: Reporter, mu: np.ndarray, ref_b: Allocation, ref: Allocation) -> None:
    rows = [
        {
            "arm": i,
            "mean μ_i": float(m),
            "w_β (β-optimal)": float(ref_b.weights[i]),
            "w* (optimal)": float(ref.weights[i]),
        }
        for i, m in enumerate(mu)
    ]
    reporter.table("instance", rows)
    reporter.log(
        f"μ = {np.round(mu, 4).tolist()}: T*_β = {ref_b.time:.2f} (β = {ref_b.beta:g}), "
        f"T* = {ref.time:.2f} at β* = {ref.beta:.4f}"
    )


def _progress_hook(reporter: Reporter, n_runs: int, every: int, label: str) -> Any:
    def hook(st: BatchState) -> None:
        if st.t % every == 0:
            done = n_runs - len(st.idx)
            reporter.progress(done / n_runs, f"{label}t = {st.t}, {done}/{n_runs} runs stopped")

    return hook


def _sampler_summary(tau: np.ndarray, correct: np.ndarray, t_max: int, scale: float) -> dict[str, Any]:
    s = tau_summary(tau, correct, t_max)
    s["ratio"] = s["mean"] / scale
    return s


# ------------------------------------------------------------------------------------------------
# 1. Live run
# ------------------------------------------------------------------------------------------------
def live_run(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """β-EB-TCI (or a variant) on one instance, streamed: N_i(t)/t, Z_t vs c(t, δ), leader, challengers, ECDF of τ."""
    cfg = LiveRunConfig.from_params(params)
    rng = seed_everything(cfg.seed)
    mu = cfg.means()
    k = len(mu)
    ref_b, ref = _reference(mu, cfg.beta)
    _instance_table(reporter, mu, ref_b, ref)
    sampler = cfg.sampler()
    reporter.log(f"sampler: {sampler.label}, {cfg.selection} selection, threshold {cfg.threshold}, δ = {cfg.delta:g}")
    every = cfg.report_every
    stride = max(1, every // 25)  # ~25 points of the tracked run per dashboard update
    buf: dict[str, tuple[list[float], list[float]]] = {}
    taus: list[int] = []
    n_ok = 0
    tracked = min(cfg.tracked_run, cfg.n_runs - 1)

    def push(key: str, step: float, value: float) -> None:
        xs, ys = buf.setdefault(key, ([], []))
        xs.append(step)
        ys.append(value)

    def flush(st: BatchState) -> None:
        nonlocal n_ok
        for key, (xs, ys) in buf.items():
            reporter.series(key, xs, ys)
        buf.clear()
        new = st.finished[len(taus) :]
        for _, tau, ok in new:
            taus.append(tau)
            n_ok += bool(ok)
        new_stopped = [float(tau) for _, tau, _ in new if tau >= 0]  # censored runs (τ = −1) are not stopping times
        stopped = [x for x in taus if x >= 0]
        if new_stopped:
            reporter.series("stop/tau", new_stopped, new_stopped)
            reporter.figure("tau_ecdf", ecdf_figure({"τ": np.array(stopped)}, "Stopping times of the finished runs"))
        done = len(taus)
        n_err = len(stopped) - n_ok  # wrong recommendations among the stopped runs
        reporter.scalars(
            st.t,
            {
                "runs/stopped_fraction": len(stopped) / cfg.n_runs,
                "runs/error_rate": n_err / len(stopped) if stopped else 0.0,
            },
        )
        chal = st.challenger_totals()
        reporter.table(
            "challengers",
            [
                {
                    "arm": i,
                    "challenger pulls": int(chal[i]),
                    "share": float(chal[i] / max(chal.sum(), 1)),
                    "w_β share": float(ref_b.weights[i] / (1 - cfg.beta)) if i != int(np.argmax(mu)) else 0.0,
                }
                for i in range(k)
            ],
        )
        censored = done - len(stopped)
        note = f", {censored} censored at t_max" if censored else ""
        reporter.progress(done / cfg.n_runs, f"t = {st.t}: {len(stopped)}/{cfg.n_runs} runs stopped{note}")

    def hook(st: BatchState) -> None:
        t = st.t
        if t % stride == 0 or t == k:
            row = st.row_of(tracked)
            if row is not None:
                for i in range(k):
                    push(f"alloc/arm{i}", t, st.counts[row, i] / t)
                    push(f"target/arm{i}", t, ref_b.weights[i])
                push("stat/Z", t, st.stat[row])
                push("stat/threshold", t, st.thresholds[-1])
                push("leader/arm", t, st.leader[row])
        if t % every == 0:
            flush(st)

    last: list[BatchState] = []

    def tracking_hook(st: BatchState) -> None:
        if not last:
            last.append(st)
        hook(st)

    res = simulate(
        mu,
        sampler,
        [cfg.delta],
        cfg.n_runs,
        rng,
        cfg.threshold,
        cfg.t_max,
        hook=tracking_hook,
        should_stop=reporter.should_stop,
    )
    if last:
        flush(last[0])  # the runs that stopped since the last update, and the final challenger counts
    scale = ref_b.time * math.log(1.0 / cfg.delta)
    s = _sampler_summary(res.tau[:, 0], res.correct[:, 0], cfg.t_max, scale)
    reporter.table(
        "summary",
        [
            {
                "sampler": sampler.label,
                **{k_: s[k_] for k_ in ("mean", "sd", "q10", "median", "q90", "error_rate", "censored", "ratio")},
            }
        ],
    )
    return jsonable(
        {
            "E_tau": s["mean"],
            "median_tau": s["median"],
            "error_rate": s["error_rate"],
            "censored": s["censored"],
            "T_star_beta": ref_b.time,
            "T_star": ref.time,
            "ratio_to_T_star_beta_log": s["ratio"],
            "steps": res.steps,
            "seconds": res.seconds,
        }
    )


# ------------------------------------------------------------------------------------------------
# 2. τ versus log(1/δ)
# ------------------------------------------------------------------------------------------------
def stopping_time(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E[τ] and quantiles against T*_β(μ)·log(1/δ) over a δ grid (sharp leading term), error rate vs δ."""
    cfg = StoppingTimeConfig.from_params(params)
    rng = seed_everything(cfg.seed)
    mu = cfg.means()
    ref_b, ref = _reference(mu, cfg.beta)
    _instance_table(reporter, mu, ref_b, ref)
    sampler = cfg.sampler()
    if cfg.device.startswith("cuda") and sampler.rule in ("eb_tci", "eb_tc"):
        # large R on a GPU: the torch path (same algorithm, masked instead of compacted; no live progress)
        from .torch_sim import simulate_torch

        reporter.log(f"simulating on {cfg.device} with the torch path")

        def progress(t: int, n_active: int) -> None:
            if t % 512 < 64:
                reporter.progress(1 - n_active / cfg.n_runs, f"t = {t}, {cfg.n_runs - n_active}/{cfg.n_runs} stopped")

        res = SimpleNamespace(
            **simulate_torch(
                mu,
                sampler,
                cfg.deltas,
                cfg.n_runs,
                cfg.seed,
                cfg.device,
                cfg.threshold,
                cfg.t_max,
                progress=progress,
                should_stop=reporter.should_stop,
            )
        )
    else:
        res = simulate(
            mu,
            sampler,
            cfg.deltas,
            cfg.n_runs,
            rng,
            cfg.threshold,
            cfg.t_max,
            hook=_progress_hook(reporter, cfg.n_runs, 500, ""),
            should_stop=reporter.should_stop,
        )
    rows = []
    for di, delta in enumerate(res.deltas):
        x = math.log(1.0 / delta)
        s = tau_summary(res.tau[:, di], res.correct[:, di], cfg.t_max)
        ratio = s["mean"] / (ref_b.time * x)
        reporter.scalars(
            x,
            {
                "tau/mean": s["mean"],
                "tau/ci_low": s["ci_low"],
                "tau/ci_high": s["ci_high"],
                "tau/q10": s["q10"],
                "tau/q50": s["median"],
                "tau/q90": s["q90"],
                "ref/T_star_beta_log": ref_b.time * x,
                "ref/T_star_log": ref.time * x,
                "ratio/mean": ratio,
                "ratio/median": s["median"] / (ref_b.time * x),
                "error/rate": s["error_rate"],
                "error/cp_low": s["error_cp_low"],
                "error/cp_high": s["error_cp_high"],
                "error/delta": float(delta),
            },
        )
        rows.append(
            {
                "δ": float(delta),
                "log(1/δ)": x,
                "E[τ]": s["mean"],
                "sd": s["sd"],
                "q10": s["q10"],
                "median": s["median"],
                "q90": s["q90"],
                "E[τ]/(T*_β log 1/δ)": ratio,
                "E[τ]/(T* log 1/δ)": s["mean"] / (ref.time * x),
                "errors": s["errors"],
                "error rate": s["error_rate"],
                "CP high": s["error_cp_high"],
                "censored": s["censored"],
            }
        )
    reporter.table("summary", rows)
    fit = [r for r in rows if r["δ"] <= cfg.slope_max_delta]
    slope = float("nan")
    if len(fit) >= 2:
        slope = float(np.polyfit([r["log(1/δ)"] for r in fit], [r["E[τ]"] for r in fit], 1)[0])
        reporter.log(
            f"slope of E[τ] vs log(1/δ) on δ ≤ {cfg.slope_max_delta:g}: {slope:.1f} = {slope / ref_b.time:.3f}·T*_β"
        )
    reporter.figure(
        "tau_ecdf",
        ecdf_figure(
            {f"δ={r['δ']:g}": np.where(res.tau[:, i] >= 0, res.tau[:, i], cfg.t_max) for i, r in enumerate(rows)},
            "ECDF of τ per δ",
        ),
    )
    reporter.progress(1.0, "done")
    return jsonable(
        {
            "T_star_beta": ref_b.time,
            "T_star": ref.time,
            "beta_star": ref.beta,
            "slope_over_T_star_beta": slope / ref_b.time,
            "ratios": [r["E[τ]/(T*_β log 1/δ)"] for r in rows],
            "deltas": [r["δ"] for r in rows],
            "error_rates": [r["error rate"] for r in rows],
            "censored": int(sum(r["censored"] for r in rows)),
            "steps": res.steps,
            "seconds": res.seconds,
        }
    )


# ------------------------------------------------------------------------------------------------
# 3. Sampler comparison
# ------------------------------------------------------------------------------------------------
def _comparison_samplers(cfg: ComparisonConfig, beta_star: float) -> list[tuple[str, str, Sampler]]:
    """(summary key, label, sampler) of every baseline (spec §2 Baselines)."""
    b = cfg.beta
    out = [
        ("eb_tci", f"{b:g}-EB-TCI", Sampler("eb_tci", beta=b)),
        ("eb_tc", f"{b:g}-EB-TC (no penalty)", Sampler("eb_tc", beta=b)),
        ("eb_tci_forced", f"{b:g}-EB-TCI + forced expl.", Sampler("eb_tci", beta=b, forced_exploration=True)),
        ("eb_tci_tracking", f"{b:g}-EB-TCI (tracking)", Sampler("eb_tci", beta=b, selection="tracking")),
        ("eb_tci_oracle", f"β*-EB-TCI (β* = {beta_star:.3f})", Sampler("eb_tci", beta=beta_star)),
        ("uniform", "uniform", Sampler("uniform")),
    ]
    if cfg.include_track_and_stop:
        out.append(("track_and_stop", "Track-and-Stop", Sampler("track_and_stop", tas_every=cfg.tas_every)))
    return out


def sampler_comparison(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """β-EB-TCI against EB-TC, forced exploration, tracking, oracle β*, uniform sampling and Track-and-Stop at one δ."""
    cfg = ComparisonConfig.from_params(params)
    rng = seed_everything(cfg.seed)
    mu = cfg.means()
    ref_b, ref = _reference(mu, cfg.beta)
    _instance_table(reporter, mu, ref_b, ref)
    samplers = _comparison_samplers(cfg, ref.beta)
    x = math.log(1.0 / cfg.delta)
    groups: dict[str, np.ndarray] = {}
    rows = []
    summary: dict[str, Any] = {"T_star": ref.time, "T_star_beta": ref_b.time, "beta_star": ref.beta}
    for n, (key, label, sampler) in enumerate(samplers):
        reporter.progress(n / len(samplers), f"{label}")
        res = simulate(
            mu,
            sampler,
            [cfg.delta],
            cfg.n_runs,
            rng,
            cfg.threshold,
            cfg.t_max,
            hook=_progress_hook(reporter, cfg.n_runs, 2000, f"{label}: "),
            should_stop=reporter.should_stop,
        )
        tau = res.tau[:, 0]
        s = tau_summary(tau, res.correct[:, 0], cfg.t_max)
        groups[label] = np.where(tau >= 0, tau, cfg.t_max)
        row = {
            "sampler": label,
            "E[τ]": s["mean"],
            "sd": s["sd"],
            "q10": s["q10"],
            "median": s["median"],
            "q90": s["q90"],
            "error rate": s["error_rate"],
            "censored": s["censored"],
            "E[τ]/(T* log 1/δ)": s["mean"] / (ref.time * x),
            "E[τ]/(T*_β log 1/δ)": s["mean"] / (ref_b.time * x),
            "seconds": res.seconds,
        }
        rows.append(row)
        reporter.table("samplers", rows)
        summary[f"{key}/E_tau"] = s["mean"]
        summary[f"{key}/sd_tau"] = s["sd"]
        summary[f"{key}/error_rate"] = s["error_rate"]
        if reporter.should_stop():
            break
    reporter.figure("tau_box", box_figure(groups, f"τ at δ = {cfg.delta:g}"))
    reporter.figure("tau_ecdf", ecdf_figure(groups, f"ECDF of τ at δ = {cfg.delta:g}"))
    reporter.progress(1.0, "done")
    return jsonable(summary)  # NaN → None: JSONB has no NaN


# ------------------------------------------------------------------------------------------------
# 4. Leader and challenger diagnostics
# ------------------------------------------------------------------------------------------------
def diagnostics(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Sampling without stopping up to a horizon: N(t)/t → w_β, min_j N_j(t)/t, T_lead, challenger pulls."""
    cfg = DiagnosticsConfig.from_params(params)
    rng = seed_everything(cfg.seed)
    mu = cfg.means()
    k = len(mu)
    i_star = int(np.argmax(mu))
    ref_b, ref = _reference(mu, cfg.beta)
    _instance_table(reporter, mu, ref_b, ref)
    sampler = cfg.sampler()
    chk = log_checkpoints(k, cfg.horizon, 60)

    def hook(st: BatchState) -> None:
        if st.t % 1000 == 0:
            reporter.progress(st.t / cfg.horizon, f"t = {st.t}/{cfg.horizon}")

    res = simulate(
        mu,
        sampler,
        [],
        cfg.n_runs,
        rng,
        cfg.threshold,
        cfg.horizon,
        checkpoints=chk,
        hook=hook,
        should_stop=reporter.should_stop,
    )
    props = res.proportions  # (C, R, K)
    ok = res.alive.any(axis=1)
    ts = chk[ok].astype(float)
    props = props[ok]
    mean_props = np.nanmean(props, axis=1)  # (C, K)
    for i in range(k):
        reporter.series(f"alloc/arm{i}", ts, mean_props[:, i])
        reporter.series(f"target/arm{i}", ts, np.full(len(ts), ref_b.weights[i]))
    dist = np.abs(props - ref_b.weights).sum(axis=2)  # (C, R)
    reporter.series("dist/l1_mean", ts, np.nanmean(dist, axis=1))
    reporter.series("dist/l1_median", ts, np.nanmedian(dist, axis=1))
    min_prop = np.nanmin(np.delete(props, i_star, axis=2), axis=2)  # min_{j≠i*} N_j(t)/t, (C, R)
    reporter.series("minprop/median", ts, np.nanmedian(min_prop, axis=1))
    reporter.series("minprop/q10", ts, np.nanquantile(min_prop, 0.1, axis=1))
    reporter.series("minprop/target", ts, np.full(len(ts), np.delete(ref_b.weights, i_star).min()))
    reporter.series("leader/correct_fraction", ts, res.leader_correct[ok].mean(axis=1))
    t_lead = res.last_wrong_leader.astype(float)
    reporter.series("lead/T_lead", np.arange(cfg.n_runs), t_lead)
    reporter.figure("t_lead_ecdf", ecdf_figure({"T_lead": t_lead + 1}, "Last time the leader was wrong (T_lead + 1)"))
    # after T_lead: the smallest challenger proportion over the checkpoints t ≥ 2·max(T_lead, 100)
    # (design choice: a factor 2 lets N(t)/t forget the pre-T_lead phase)
    after = ts[:, None] >= 2.0 * np.maximum(t_lead[None, :], 100.0)  # (C, R)
    reporter.series(
        "minprop/after_lead_q10",
        ts[after.any(axis=1)],
        [float(np.quantile(min_prop[c][after[c]], 0.1)) for c in np.flatnonzero(after.any(axis=1))],
    )
    post_min = np.where(after, min_prop, np.inf).min(axis=0)
    post_min = post_min[np.isfinite(post_min)]
    w_min = float(np.delete(ref_b.weights, i_star).min())
    chal = res.challenger_pulls.sum(axis=0).astype(float)
    reporter.table(
        "challengers",
        [
            {
                "arm": i,
                "μ_i": float(mu[i]),
                "challenger pulls per run": float(chal[i] / cfg.n_runs),
                "share of challenger pulls": float(chal[i] / max(chal.sum(), 1.0)),
                "w_β,i/(1 − β)": float(ref_b.weights[i] / (1.0 - cfg.beta)) if i != i_star else 0.0,
                "final N_i/t": float(res.counts[:, i].mean() / cfg.horizon),
                "w_β,i": float(ref_b.weights[i]),
            }
            for i in range(k)
        ],
    )
    q = np.quantile(t_lead, [0.5, 0.9, 0.99])
    final_dist = float(np.nanmean(dist[-1]))
    summary = {
        "T_lead_median": float(q[0]),
        "T_lead_q90": float(q[1]),
        "T_lead_q99": float(q[2]),
        "T_lead_max": float(t_lead.max()),
        "final_l1_distance_mean": final_dist,
        "post_T_lead_min_prop_median": float(np.median(post_min)) if len(post_min) else float("nan"),
        "post_T_lead_min_prop_min": float(post_min.min()) if len(post_min) else float("nan"),
        "w_beta_min": w_min,
        "runs_with_post_T_lead_window": int(len(post_min)),
        "tracking_gap_max": float(res.tracking_gap.max()),
        "seconds": res.seconds,
    }
    reporter.table("summary", [{"quantity": key, "value": val} for key, val in summary.items()])
    reporter.progress(1.0, "done")
    return jsonable(summary)  # NaN → None: JSONB has no NaN


# ------------------------------------------------------------------------------------------------
# 5. With vs without forced exploration
# ------------------------------------------------------------------------------------------------
def forced_exploration(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """β-EB-TCI with and without forced exploration on two instances (default: GK16 μ1 and equal suboptimal means)."""
    cfg = ForcedExplorationConfig.from_params(params)
    rng = seed_everything(cfg.seed)
    instances = {
        "instance1": cfg.means(),
        "instance2": resolve_means(cfg.second_instance, cfg.arm_means, cfg.n_arms, cfg.seed + 1),
    }
    names = {"instance1": cfg.instance, "instance2": cfg.second_instance}
    rows = []
    summary: dict[str, Any] = {}
    groups: dict[str, np.ndarray] = {}
    n_jobs, job = 4, 0
    for tag, mu in instances.items():
        k = len(mu)
        ref_b = t_star_beta(mu, cfg.beta)
        chk = log_checkpoints(k, cfg.t_max, 80)
        x = math.log(1.0 / cfg.delta)
        means: dict[bool, float] = {}
        for forced in (False, True):
            label = f"{names[tag]} {'with' if forced else 'without'} forced expl."
            reporter.progress(job / n_jobs, label)
            job += 1
            res = simulate(
                mu,
                cfg.sampler(forced_exploration=forced),
                [cfg.delta],
                cfg.n_runs,
                rng,
                cfg.threshold,
                cfg.t_max,
                checkpoints=chk,
                should_stop=reporter.should_stop,
            )
            tau = res.tau[:, 0]
            s = tau_summary(tau, res.correct[:, 0], cfg.t_max)
            means[forced] = s["mean"]
            groups[label] = np.where(tau >= 0, tau, cfg.t_max)
            ok = res.alive.any(axis=1)
            ts = chk[ok].astype(float)
            min_prop = res.proportions[ok].min(axis=2)  # NaN for runs that already stopped
            reporter.series(f"minprop/{tag}_{'forced' if forced else 'plain'}", ts, np.nanmedian(min_prop, axis=1))
            if forced:
                worst = np.where(res.alive[ok], res.forced_at[ok], 0).max(axis=1)
                reporter.series(f"forced/{tag}_max", ts, worst)
                reporter.series(f"forced/{tag}_budget", ts, forced_exploration_budget(ts, k))
            rows.append(
                {
                    "instance": names[tag],
                    "μ": str(np.round(mu, 3).tolist()),
                    "forced exploration": forced,
                    "E[τ]": s["mean"],
                    "sd": s["sd"],
                    "median": s["median"],
                    "q90": s["q90"],
                    "error rate": s["error_rate"],
                    "censored": s["censored"],
                    "E[τ]/(T*_β log 1/δ)": s["mean"] / (ref_b.time * x),
                    "forced pulls (mean)": float(res.forced_pulls.mean()),
                    "max excess over √(Kt)+K": float(res.forced_excess.max()) if forced else 0.0,
                }
            )
            reporter.table("comparison", rows)
            summary[f"{tag}/{'forced' if forced else 'plain'}/E_tau"] = s["mean"]
            if forced:
                summary[f"{tag}/forced_excess_max"] = float(res.forced_excess.max())
                summary[f"{tag}/forced_pulls_mean"] = float(res.forced_pulls.mean())
        summary[f"{tag}/relative_change"] = means[True] / means[False] - 1.0
    reporter.figure("tau_ecdf", ecdf_figure(groups, f"ECDF of τ at δ = {cfg.delta:g}"))
    reporter.progress(1.0, "done")
    return jsonable(summary)  # NaN → None: JSONB has no NaN

"""Entry points of the sae_replay experiments: ``fn(params, reporter) -> summary``."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from compute.core.reporter import Reporter, StopRequested
from compute.core.runtime import seed_everything
from compute.sae_replay import metrics as M
from compute.sae_replay.config import InterpConfig, RobustnessConfig, ScalingConfig, SourceConfig, SweepConfig
from compute.sae_replay.replay import PoolSource, TrainSpec, train_sae
from compute.sae_replay.sae import ARCHS as ARCH_CODES
from compute.sae_replay.sae import SAE
from compute.sae_replay.scaling import bootstrap, effective_data, fit_law, predict, recommend_buffer
from compute.sae_replay.sources import Source, synthetic_source


# ------------------------------------------------------------------------------------------------
# shared pieces
# ------------------------------------------------------------------------------------------------
def make_source(cfg: SourceConfig, reporter: Reporter, layer: int | None = None) -> Source:
    n_eval = 1 << cfg.n_eval_log2
    if cfg.source == "synthetic":
        return synthetic_source(cfg.d, cfg.n_feat, cfg.noise, cfg.n_hier, n_eval, cfg.seed)
    if cfg.source == "minilm":
        from compute.sae_replay.minilm import minilm_source

        return minilm_source(reporter, layer or cfg.layer, 1 << cfg.cache_tokens_log2, n_eval, cfg.seed)
    raise ValueError(f"unknown source {cfg.source!r}")


def make_spec(cfg: SourceConfig, src: Source, T: int, arch: str | None = None, l0_coeff: float = 0.0) -> TrainSpec:
    return TrainSpec(
        d=src.d,
        m=cfg.m,
        arch=arch or cfg.arch,
        k=cfg.k,
        batch=cfg.batch,
        lr=cfg.lr,
        l0_coeff=l0_coeff,
        n_dead_tokens=max(4 * cfg.batch, T // 16),  # 10⁶ tokens of a ~10⁸-token run, scaled to T/16
        init_seed=cfg.seed,
    )


def calibrate_lambda(cfg: SourceConfig, src: Source, T: int, reporter: Reporter) -> float:
    """JumpReLU λ with held-out L0 within 10 % of k: geometric bisection on short fresh runs (T/4 tokens)."""
    lo, hi = 1e-4, 10.0
    lam = math.sqrt(lo * hi)
    t_cal = max(cfg.batch * 8, T // 4)
    for it in range(7):
        spec = make_spec(cfg, src, t_cal, "jumprelu", lam)
        sae, _ = train_sae(spec, src.fresh(9000 + it), t_cal, src.mean, should_stop=reporter.should_stop)
        l0 = M.reconstruction(sae, src.x_eval[:4096])["l0"]
        reporter.log(f"JumpReLU λ calibration: λ={lam:.3g} → L0={l0:.1f} (target {cfg.k})")
        if abs(l0 - cfg.k) <= 0.1 * cfg.k:
            break
        lo, hi = (lam, hi) if l0 > cfg.k else (lo, lam)
        lam = math.sqrt(lo * hi)
    return lam


def train_arm(
    cfg: SourceConfig,
    src: Source,
    spec: TrainSpec,
    kind: str,
    T: int,
    U: int,
    seed: int,
    reporter: Reporter,
    name: str,
    live: bool = True,
) -> tuple[SAE, torch.Tensor | None, float]:
    """Train one arm; returns (SAE, pool or None, seconds).  kind: fresh | replay | small."""
    pool = None
    if kind == "fresh":
        nb = src.fresh(seed)
        n_tok = T
    else:
        pool = src.pool(U, seed)
        ps = PoolSource(pool, T // U if kind == "replay" else 1, seed)
        nb = ps.next
        n_tok = T if kind == "replay" else U

    def on_eval(tokens: int, sae: SAE) -> None:
        r = M.reconstruction(sae, src.x_eval)
        reporter.scalars(tokens, {f"ev/{name}": r["ev"], f"nmse/{name}": r["nmse"]})

    t0 = time.perf_counter()
    sae, _ = train_sae(
        spec, nb, n_tok, src.mean, on_eval if live else None, n_evals=cfg.n_evals, should_stop=reporter.should_stop
    )
    return sae, pool, time.perf_counter() - t0


def evaluate(src: Source, sae: SAE, pool: torch.Tensor | None, probe_k: int = 1) -> dict[str, float]:
    """Held-out reconstruction, pool EV (memorization gap) and, on synthetic data, ground-truth metrics."""
    out = M.reconstruction(sae, src.x_eval)
    if pool is not None:
        out["pool_ev"] = M.reconstruction(sae, pool[: src.x_eval.shape[0]])["ev"]
        out["gap"] = out["pool_ev"] - out["ev"]
    gen = src.extras.get("generator")
    if gen is not None:
        W = sae.W_dec.detach()
        out.update(M.mmcs(gen.features, W))
        _, f = M.encode_all(sae, src.x_eval)
        a = src.extras["a_eval"]
        out.update(M.absorption(gen.features, W, f, a, gen.hierarchies))
        half = f.shape[0] // 2
        # sparse probing: presence of 8 mid-frequency true features (binary, balanced accuracy), top-k latents
        accs = []
        for i in range(8, 16):
            y = (a[:, i] > 0).long()
            accs.append(M.sparse_probe(f[:half], y[:half], f[half:], y[half:], probe_k, 2))
        out["probe"] = float(np.mean(accs))
        lab = (a > 0).numpy()
        out["detection_proxy"] = M.detection_proxy(f[:half], lab[:half], f[half:], lab[half:])
    elif "token_ids" in src.extras:
        from compute.sae_replay.minilm import minilm_interp

        out.update(minilm_interp(src, sae, probe_k))
    return out


def _arm_rows(T: int, r_list: list[int], small: bool) -> list[dict[str, Any]]:
    arms = [{"name": "fresh", "kind": "fresh", "R": 1, "U": T}]
    for R in sorted({r for r in r_list if r > 1}):
        arms.append({"name": f"replay_R{R}", "kind": "replay", "R": R, "U": T // R})
        if small:
            arms.append({"name": f"small_U{T // R}", "kind": "small", "R": R, "U": T // R})
    return arms


def _round(d: dict[str, Any], nd: int = 5) -> dict[str, Any]:
    return {k: (round(v, nd) if isinstance(v, float) else v) for k, v in d.items()}


# ------------------------------------------------------------------------------------------------
# Experiment 1: replay sweep
# ------------------------------------------------------------------------------------------------
def replay_sweep(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Fresh vs replay (R = T/U) vs small-but-fresh at equal T, L0 and steps; held-out metrics only."""
    cfg = SweepConfig.from_params(params)
    seed_everything(cfg.seed)
    T = 1 << cfg.t_log2
    src = make_source(cfg, reporter)
    if src.max_fresh is not None and T > src.max_fresh:
        raise ValueError(f"T = {T} exceeds the {src.max_fresh} cached rows: lower t_log2 or grow the cache")
    lam = calibrate_lambda(cfg, src, T, reporter) if cfg.arch == "jumprelu" and cfg.l0_coeff == 0 else cfg.l0_coeff
    spec = make_spec(cfg, src, T, l0_coeff=lam)
    arms = _arm_rows(T, cfg.r_list, cfg.small_fresh)
    for s in range(1, cfg.fresh_seeds):
        arms.insert(s, {"name": f"fresh_s{s}", "kind": "fresh", "R": 1, "U": T, "fresh_seed": s})
    rows = []
    try:
        for i, arm in enumerate(arms):
            reporter.progress(i / len(arms), f"{arm['name']}: U={arm['U']}, R={arm['R']}")
            sae, pool, secs = train_arm(
                cfg, src, spec, arm["kind"], T, arm["U"], arm.get("fresh_seed", 0), reporter, arm["name"]
            )
            row = {**{k: arm[k] for k in ("name", "kind", "R", "U")}, **evaluate(src, sae, pool), "seconds": secs}
            rows.append(_round(row))
            reporter.table("final", rows)
            reporter.check_stop()
    except StopRequested:
        return {"cancelled": True, "arms_done": len(rows)}
    fresh = [r for r in rows if r["kind"] == "fresh"]
    ev_f = float(np.mean([r["ev"] for r in fresh]))
    lo = min(r["ev"] for r in fresh) - cfg.tol_ev
    hi = max(r["ev"] for r in fresh) + cfg.tol_ev
    rep = [r for r in rows if r["kind"] == "replay"]
    small = [r for r in rows if r["kind"] == "small"]
    Rs = [1] + [r["R"] for r in rep]
    reporter.series("final/replay_ev", Rs, [ev_f] + [r["ev"] for r in rep])
    reporter.series("final/fresh_lo", Rs, [lo] * len(Rs))
    reporter.series("final/fresh_hi", Rs, [hi] * len(Rs))
    if small:
        reporter.series("final/small_ev", [r["R"] for r in small], [r["ev"] for r in small])
    reporter.series("pool/pool_ev", [r["R"] for r in rep], [r["pool_ev"] for r in rep])
    reporter.series("pool/heldout_ev", [r["R"] for r in rep], [r["ev"] for r in rep])
    reporter.series("gap/pool_minus_heldout", [r["R"] for r in rep], [r["gap"] for r in rep])
    reporter.series("sparsity/l0", Rs, [fresh[0]["l0"]] + [r["l0"] for r in rep])
    reporter.series("dead/fraction", Rs, [fresh[0]["dead"]] + [r["dead"] for r in rep])
    if "mmcs" in fresh[0]:
        reporter.series("truth/mmcs", Rs, [fresh[0]["mmcs"]] + [r["mmcs"] for r in rep])
        reporter.series("truth/recovered", Rs, [fresh[0]["recovered"]] + [r["recovered"] for r in rep])
    # plateau: the largest R such that every replay arm up to it is within tol of fresh
    r_crit = 1
    for r in sorted(rep, key=lambda r: r["R"]):
        if abs(r["ev"] - ev_f) <= cfg.tol_ev:
            r_crit = r["R"]
        else:
            break
    plateau = [
        {
            "R": r["R"],
            "U": r["U"],
            "delta_ev": round(r["ev"] - ev_f, 5),
            "within_tol": abs(r["ev"] - ev_f) <= cfg.tol_ev,
            "nmse_rel": round(r["nmse"] / (1 - ev_f) - 1, 5),
            "small_minus_replay_ev": round(
                next((s["ev"] for s in small if s["U"] == r["U"]), float("nan")) - r["ev"], 5
            ),
            "gap": r["gap"],
        }
        for r in rep
    ]
    reporter.table("plateau", plateau)
    reporter.progress(1.0, f"R_crit = {r_crit}: storage saved {r_crit}×")
    return {
        "ev_fresh": round(ev_f, 5),
        "R_crit": r_crit,
        "storage_reduction": r_crit,
        "max_abs_delta_ev_within": max([abs(p["delta_ev"]) for p in plateau if p["R"] <= r_crit], default=0.0),
        "jumprelu_lambda": lam if cfg.arch == "jumprelu" else None,
        **{f"delta_ev_R{p['R']}": p["delta_ev"] for p in plateau},
    }


# ------------------------------------------------------------------------------------------------
# Experiment 2: scaling-law fit and the buffer-sizing rule
# ------------------------------------------------------------------------------------------------
def scaling_fit(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Train the (U, R[, m]) grid, fit L = E + A/N^α + B/D′^β, and size the buffer for the target budget."""
    cfg = ScalingConfig.from_params(params)
    seed_everything(cfg.seed)
    src = make_source(cfg, reporter)
    ms = cfg.m_list or [cfg.m]
    grid = [(m, 1 << u, r) for m in ms for u in cfg.u_log2_list for r in cfg.r_list]
    cost = [U * R for _, U, R in grid]
    done_cost, rows = 0, []
    try:
        for m, U, R in grid:
            reporter.progress(done_cost / sum(cost), f"m={m}, U=2^{int(math.log2(U))}, R={R}")
            c = SourceConfig.from_params({**cfg.__dict__, "m": m})
            T = U * R
            if src.max_fresh is not None and U > src.max_fresh:
                raise ValueError(f"U = {U} exceeds the {src.max_fresh} cached rows")
            spec = make_spec(c, src, T, l0_coeff=cfg.l0_coeff)
            sae, pool, secs = train_arm(c, src, spec, "replay", T, U, 0, reporter, "grid", live=False)
            r = M.reconstruction(sae, src.x_eval)
            pr = M.reconstruction(sae, pool[: src.x_eval.shape[0]])["ev"]
            rows.append(
                {"m": m, "U": U, "R": R, "T": T, "nmse": r["nmse"], "ev": r["ev"], "pool_ev": pr, "l0": r["l0"]}
            )
            reporter.scalar(f"grid/nmse_R{R}", U, r["nmse"])
            reporter.table("runs", [_round(x) for x in rows])
            done_cost += U * R
            reporter.check_stop()
    except StopRequested:
        return {"cancelled": True, "runs_done": len(rows)}
    N = np.array([r["m"] for r in rows], float)
    U = np.array([r["U"] for r in rows], float)
    R = np.array([r["R"] for r in rows], float)
    L = np.array([max(r["nmse"], 1e-9) for r in rows], float)
    reporter.progress(0.95, "fitting the data-constrained law")
    fit = fit_law(N, U, R, L)
    p = fit.params
    T_target = float(1 << cfg.target_t_log2)
    rule = recommend_buffer(p, ms[0], T_target, cfg.tolerance)
    ci = bootstrap(N, U, R, L, fit, T_target, ms[0], cfg.tolerance, n_boot=cfg.n_boot, seed=cfg.seed)
    pred = predict(p, N, U, R)
    for r, lp in zip(rows, pred, strict=True):
        r["nmse_fit"] = float(lp)
        r["residual_log"] = float(np.log(r["nmse"] / lp))
    reporter.table("runs", [_round(x) for x in rows])
    # heatmaps: observed and fitted held-out loss over (U, R) for the first m
    us, rs = sorted(set(U.tolist())), sorted(set(R.tolist()))
    sel = N == ms[0]
    obs = [
        [float(L[sel & (U == u) & (R == r)][0]) if (sel & (U == u) & (R == r)).any() else None for u in us] for r in rs
    ]
    resid = [
        [None if o is None else float(np.log(o / predict(p, ms[0], u, r))) for o, u in zip(row, us, strict=True)]
        for row, r in zip(obs, rs, strict=True)
    ]
    ulab = [f"2^{int(math.log2(u))}" for u in us]
    reporter.figure(
        "heatmap",
        {
            "data": [{"type": "heatmap", "z": obs, "x": ulab, "y": [str(int(r)) for r in rs], "colorscale": "Viridis"}],
            "layout": {"xaxis": {"title": "unique rows U"}, "yaxis": {"title": "replay factor R"}},
        },
    )
    reporter.figure(
        "residuals",
        {
            "data": [{"type": "heatmap", "z": resid, "x": ulab, "y": [str(int(r)) for r in rs], "colorscale": "RdBu"}],
            "layout": {"xaxis": {"title": "unique rows U"}, "yaxis": {"title": "R"}, "title": "log(observed/fitted)"},
        },
    )
    traces = []
    for j, r in enumerate(rs):
        traces.append({"type": "scatter", "mode": "markers", "name": f"R={int(r)} obs", "x": us, "y": obs[j]})
        uu = np.exp(np.linspace(np.log(us[0]), np.log(us[-1] * 4), 60))
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"R={int(r)} fit",
                "x": uu.tolist(),
                "y": predict(p, ms[0], uu, r).tolist(),
            }
        )
    reporter.figure(
        "fit",
        {
            "data": traces,
            "layout": {
                "xaxis": {"title": "U", "type": "log"},
                "yaxis": {"title": "held-out nMSE", "type": "log"},
                "title": f"observed (markers) vs fitted law (lines), fitted: {fit_n_str(fit)}",
            },
        },
    )
    # iso-loss storage frontier: for each budget T, the smallest U within tolerance of fresh
    Ts = [1 << t for t in range(min(cfg.u_log2_list), cfg.target_t_log2 + 5)]
    fr = [recommend_buffer(p, ms[0], t, cfg.tolerance) for t in Ts]
    reporter.series("frontier/U_min", Ts, [f["U"] for f in fr])
    reporter.series("frontier/storage_reduction", Ts, [f["storage_reduction"] for f in fr])
    # predicted loss vs R at the target budget
    Rg = np.exp(np.linspace(0, np.log(256), 50))
    reporter.series("predicted/nmse_vs_R", Rg.tolist(), predict(p, ms[0], T_target / Rg, Rg).tolist())
    reporter.series(
        "predicted/D_eff_over_T", Rg.tolist(), (effective_data(T_target / Rg, Rg, p.R_star) / T_target).tolist()
    )
    summary = {
        **{k: round(v, 6) for k, v in p.as_dict().items()},
        "R_star_ci": [round(v, 3) for v in ci["R_star"]],
        "target_T": int(T_target),
        "recommended_U": int(round(rule["U"])),
        "storage_reduction": round(rule["storage_reduction"], 3),
        "storage_reduction_ci": [round(v, 3) for v in ci["storage_reduction"]],
        "fit_rmse_log": round(float(np.sqrt(np.mean(np.log(pred / L) ** 2))), 5),
        "runs": len(rows),
    }
    reporter.table("fit", [{"quantity": k, "value": str(v)} for k, v in summary.items()])
    return summary


def fit_n_str(fit: Any) -> str:
    return "E, A, α, B, β, R*" if fit.fit_n else "E, B, β, R*"


# ------------------------------------------------------------------------------------------------
# Experiment 3: architecture and layer robustness
# ------------------------------------------------------------------------------------------------
def robustness(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """ΔEV (replay − fresh) for each architecture × layer × R at equal T and matched L0."""
    cfg = RobustnessConfig.from_params(params)
    seed_everything(cfg.seed)
    T = 1 << cfg.t_log2
    layers = cfg.layers if cfg.source == "minilm" else [0]
    rows: list[dict[str, Any]] = []
    n_total = len(layers) * len(cfg.archs) * (1 + len(cfg.r_list))
    done = 0
    try:
        for layer in layers:
            src = make_source(cfg, reporter, layer=layer or None)
            for arch in [ARCH_CODES[a] if isinstance(a, int) else a for a in cfg.archs]:
                lam = calibrate_lambda(cfg, src, T, reporter) if arch == "jumprelu" else 0.0
                spec = make_spec(cfg, src, T, arch=arch, l0_coeff=lam)
                tag = f"{arch}_L{layer}" if cfg.source == "minilm" else arch
                reporter.progress(done / n_total, f"{tag}: fresh")
                sae, _, _ = train_arm(cfg, src, spec, "fresh", T, T, 0, reporter, f"{tag}_fresh")
                base = M.reconstruction(sae, src.x_eval)
                done += 1
                for R in cfg.r_list:
                    reporter.progress(done / n_total, f"{tag}: R={R}")
                    sae, pool, _ = train_arm(cfg, src, spec, "replay", T, T // R, 0, reporter, f"{tag}_R{R}")
                    r = M.reconstruction(sae, src.x_eval)
                    rows.append(
                        {
                            "group": f"{tag} R={R}",
                            "arch": arch,
                            "layer": layer,
                            "R": R,
                            "ev_fresh": base["ev"],
                            "ev_replay": r["ev"],
                            "delta_ev": r["ev"] - base["ev"],
                            "l0_fresh": base["l0"],
                            "l0_replay": r["l0"],
                            "lambda": lam,
                            "within_tol": abs(r["ev"] - base["ev"]) <= cfg.tol_ev,
                        }
                    )
                    done += 1
                    reporter.table("delta", [_round(x) for x in rows])
                    reporter.check_stop()
    except StopRequested:
        return {"cancelled": True}
    return {
        "all_within_tol": all(r["within_tol"] for r in rows),
        "max_abs_delta_ev": round(max(abs(r["delta_ev"]) for r in rows), 5),
        **{f"delta_ev/{r['group']}": round(r["delta_ev"], 5) for r in rows},
    }


# ------------------------------------------------------------------------------------------------
# Experiment 4: interpretability under replay
# ------------------------------------------------------------------------------------------------
def interpretability(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Absorption, sparse probing and the (labelled) interpretability proxies against R, over seeds."""
    cfg = InterpConfig.from_params(params)
    seed_everything(cfg.seed)
    T = 1 << cfg.t_log2
    src = make_source(cfg, reporter)
    lam = calibrate_lambda(cfg, src, T, reporter) if cfg.arch == "jumprelu" and cfg.l0_coeff == 0 else cfg.l0_coeff
    rows: list[dict[str, Any]] = []
    Rs = sorted(set(cfg.r_list) | {1})
    n_total, done = len(Rs) * cfg.n_seeds, 0
    try:
        for s in range(cfg.n_seeds):
            c = SourceConfig.from_params({**cfg.__dict__, "seed": cfg.seed + s})
            spec = make_spec(c, src, T, l0_coeff=lam)
            for R in Rs:
                reporter.progress(done / n_total, f"seed {s}, R={R}")
                kind = "fresh" if R == 1 else "replay"
                sae, pool, _ = train_arm(c, src, spec, kind, T, T // R, s, reporter, f"R{R}_s{s}", live=False)
                ev = evaluate(src, sae, pool, cfg.probe_k)
                rows.append(_round({"R": R, "seed": s, **ev}))
                reporter.table("per_run", rows)
                done += 1
                reporter.check_stop()
    except StopRequested:
        return {"cancelled": True}
    keys = [
        k
        for k in ("absorption", "probe", "topic_probe", "letter_probe", "detection_proxy", "mmcs", "ev")
        if k in rows[0]
    ]
    agg = []
    for R in Rs:
        sub = [r for r in rows if r["R"] == R]
        a = {"R": R}
        for k in keys:
            v = np.array([r[k] for r in sub], float)
            a[k] = float(np.nanmean(v))
            a[k + "_sd"] = float(np.nanstd(v))
            reporter.scalar(f"interp/{k}", R, a[k])
        agg.append(_round(a))
    reporter.table("by_R", agg)
    # flat within seed noise: |metric(R) − metric(1)| ≤ 2·max(seed sd, 0.01)
    flat = {}
    for k in keys:
        ref = agg[0]
        flat[k] = [a["R"] for a in agg if abs(a[k] - ref[k]) <= 2 * max(ref[k + "_sd"], a[k + "_sd"], 0.01)]
    return {
        **{f"{k}_R{a['R']}": a[k] for a in agg for k in keys},
        **{f"flat_up_to_R/{k}": max(v) if v else 1 for k, v in flat.items()},
    }


# ------------------------------------------------------------------------------------------------
# Build step: the MiniLM activation cache
# ------------------------------------------------------------------------------------------------
def cache_build(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Tokenize BBC News, run MiniLM once and store the requested layers' activations (fp16 memmaps)."""
    from compute.sae_replay.minilm import build_cache, cache_paths

    n_train, n_eval = 1 << int(params["cache_tokens_log2"]), 1 << int(params["n_eval_log2"])
    layers = sorted(set(params["layers"]))
    t0 = time.perf_counter()
    meta = build_cache(reporter.data_dir, n_train, n_eval, layers, reporter)
    secs = time.perf_counter() - t0
    base, _ = cache_paths(reporter.data_dir, n_train, n_eval)
    rows = []
    for L in layers:
        size = sum(Path(f"{base}_{sp}_L{L}.npy").stat().st_size for sp in ("train", "eval"))
        rows.append({"layer": L, "MiB": round(size / 2**20, 2), **meta["layers"][str(L)]})
    reporter.table("cache", rows)
    return {
        "train_tokens": n_train,
        "eval_tokens": n_eval,
        "documents_deduplicated": meta["documents"],
        "seconds": round(secs, 2),
        "tokens_per_s": round(rows[0]["tokens_per_s"], 1),
        "MiB": round(sum(r["MiB"] for r in rows), 2),
    }

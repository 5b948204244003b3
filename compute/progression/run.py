"""Entry points of the four STEP experiments: RUL/end state, latent compass, forecasting, phase separation."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from compute.core.reporter import Reporter
from compute.core.runtime import seed_everything

from .compass import compass, fit_compass, raw_angle, wrap
from .config import FD_SOURCES, StepConfig
from .data import make_dataset
from .metrics import (
    adjusted_rand_index,
    kmeans,
    monotonicity,
    normalized_mutual_info,
    phm_score,
    prognosability,
    rmse,
    spearman,
    trendability,
)
from .model import StepModel, encode, make_groups
from .preprocess import Prepared, Windows, prepare
from .train import cnn_rul, fit_linear, predict_linear, tr_head_rul, train_encoder

# README of LucasStill/STEP: test RMSE on C-MAPSS (z = 4)
PAPER_RMSE = {
    "Tr-STEP": {"fd001": 11.26, "fd002": 12.34, "fd003": 13.35, "fd004": 12.10},
    "LR-STEP": {"fd001": 12.87, "fd002": 12.94, "fd003": 14.49, "fd004": 20.40},
    "MS-DCNN": {"fd001": 11.44, "fd002": 19.35, "fd003": 11.67, "fd004": 22.20},
    "Tr-SoftCLT": {"fd001": 11.56, "fd002": 17.72, "fd003": 13.36, "fd004": 19.75},
}
N_HOLDOUT = 20  # full run-to-failure units scored by the compass / forecasting / phase experiments
N_END = 8  # windows at each end of a unit used for the start / end angles


@dataclass
class LatentFit:
    """A trained encoder and its compass on every split."""

    model: StepModel
    theta0: float
    sign: float
    z: dict[str, np.ndarray]
    theta: dict[str, np.ndarray]
    r: dict[str, np.ndarray]


def _splits(prep: Prepared) -> dict[str, Windows]:
    out = {"train": prep.train, "test": prep.test}
    if prep.holdout is not None:
        out["holdout"] = prep.holdout
    return out


def latent_fit(model: StepModel, prep: Prepared, cfg: StepConfig) -> LatentFit:
    """Encode every split; fit theta0 (healthy = first group of the training grouping) and the orientation."""
    z = {k: encode(model, W.X, cfg.device) for k, W in _splits(prep).items()}
    group, _, _ = make_groups(prep.train.rul, prep.train.life, cfg.grouping)
    theta0, sign = fit_compass(z["train"], prep.train.start, group == 0)
    theta, r = {}, {}
    for k, W in _splits(prep).items():
        theta[k], r[k] = compass(z[k], theta0, W.start, sign)
    return LatentFit(model, theta0, sign, z, theta, r)


def _features(fit: LatentFit, split: str) -> np.ndarray:
    return np.c_[fit.theta[split], fit.r[split]]


def lr_on_features(F_train: np.ndarray, Wtr: Windows, F_test: np.ndarray, Wte: Windows, cap: int) -> np.ndarray:
    """Linear regression of capped RUL on per-window features; prediction at each test unit's last window."""
    w = fit_linear(F_train, np.minimum(Wtr.rul, cap))
    return np.clip(predict_linear(w, F_test[Wte.last_rows()]), 0.0, None)


def train_step(
    prep: Prepared,
    cfg: StepConfig,
    reporter: Reporter | None,
    prefix: str = "loss",
    progress: tuple[float, float] = (0.0, 1.0),
    track_rmse: str | None = None,
) -> LatentFit:
    """Train STEP; optionally report the LR-STEP test RMSE after every epoch under ``track_rmse``."""

    def on_epoch(epoch: int, model: StepModel) -> None:
        if reporter is None or track_rmse is None:
            return
        fit = latent_fit(model, prep, cfg)
        pred = lr_on_features(_features(fit, "train"), prep.train, _features(fit, "test"), prep.test, cfg.rul_cap)
        truth = np.minimum(prep.test.rul[prep.test.last_rows()], cfg.rul_cap)
        reporter.scalar(track_rmse, epoch + 1, rmse(pred, truth))

    model, _ = train_encoder(prep.train, cfg, reporter, "step", prefix, on_epoch, progress)
    return latent_fit(model, prep, cfg)


# ------------------------------------------------------------------------------------------------
# 1. RUL / end state
# ------------------------------------------------------------------------------------------------
def _rul_one(
    src: str, cfg: StepConfig, reporter: Reporter, progress: tuple[float, float], first: bool, track: bool
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """All methods on one (source, seed): predictions at the test units' last windows, and the capped truth."""
    seed_everything(cfg.seed)
    prep = prepare(make_dataset(src, cfg.n_units, cfg.seed), cfg.window)
    truth = np.minimum(prep.test.rul[prep.test.last_rows()], cfg.rul_cap)
    p0, p1 = progress
    n_parts = 1 + int(cfg.baselines) + 2 * int(cfg.ssl_baselines)
    span = (p1 - p0) / n_parts
    tag = f"{src}/seed{cfg.seed}"
    fit = train_step(
        prep, cfg, reporter, "loss" if first else f"loss_{tag}", (p0, p0 + span), f"rmse_epoch/{src}" if track else None
    )
    preds: dict[str, np.ndarray] = {}
    Ftr, Fte = _features(fit, "train"), _features(fit, "test")
    preds["LR-STEP"] = lr_on_features(Ftr, prep.train, Fte, prep.test, cfg.rul_cap)
    preds["Tr-STEP"] = tr_head_rul(Ftr, prep.train, Fte, prep.test, cfg, cfg.seed)
    part = 1
    if cfg.baselines:
        reporter.progress(p0 + span, f"{tag}: MS-DCNN baseline")
        preds["MS-DCNN"] = cnn_rul(prep.train, prep.test, cfg, cfg.seed)
        flat_tr, flat_te = prep.train.X.reshape(len(prep.train.X), -1), prep.test.X.reshape(len(prep.test.X), -1)
        preds["LR-raw"] = lr_on_features(flat_tr, prep.train, flat_te, prep.test, cfg.rul_cap)
        part += 1
    if not cfg.ssl_baselines:
        return preds, truth
    for i, kind in enumerate(("ae", "softclt")):
        name = "AE" if kind == "ae" else "SoftCLT"
        pr = (p0 + (part + i) * span, p0 + (part + 1 + i) * span)
        enc, _ = train_encoder(
            prep.train, cfg, reporter, kind, "baseline_loss" if first else f"baseline_{tag}", None, pr
        )
        ztr, zte = encode(enc, prep.train.X, cfg.device), encode(enc, prep.test.X, cfg.device)
        preds[f"LR-{name}"] = lr_on_features(ztr, prep.train, zte, prep.test, cfg.rul_cap)
        preds[f"Tr-{name}"] = tr_head_rul(ztr, prep.train, zte, prep.test, cfg, cfg.seed)
    return preds, truth


def rul_end_state(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """End-state (RUL) prediction: LR-STEP and Tr-STEP against MS-DCNN, AE, SoftCLT-like and raw-linear baselines.

    Scores each test unit at its last window against min(true RUL, cap): RMSE and the PHM08 score; mean +- std
    over ``n_seeds`` seeds. ``source="fd_all"`` runs the four FD-like variants (the README table).
    """
    cfg = StepConfig.from_params(params)
    sources = FD_SOURCES if cfg.source == "fd_all" else (cfg.source,)
    runs = [(s, k) for s in sources for k in range(cfg.n_seeds)]
    scores: dict[tuple[str, str], dict[str, list[float]]] = {}
    for i, (src, k) in enumerate(runs):
        c = replace(cfg, source=src, seed=cfg.seed + k)
        preds, truth = _rul_one(src, c, reporter, (i / len(runs), (i + 1) / len(runs)), first=(i == 0), track=(k == 0))
        for m, p in preds.items():
            d = scores.setdefault((src, m), {"rmse": [], "score": []})
            d["rmse"].append(rmse(p, truth))
            d["score"].append(phm_score(p, truth))
        if k == 0:
            shown = [m for m in ("LR-STEP", "Tr-STEP", "MS-DCNN") if m in preds]
            key = "rul_scatter" if src == sources[0] else f"rul_scatter_{src}"
            reporter.figure(key, _pred_true_figure(truth, {m: preds[m] for m in shown}, src))
        _report_rul_tables(reporter, scores, sources, cfg.n_seeds)
        if reporter.should_stop():
            break
    reporter.progress(1.0, "done")
    summary: dict[str, Any] = {}
    for (src, m), d in scores.items():
        summary[f"{src}/{m}/rmse"] = float(np.mean(d["rmse"]))
        summary[f"{src}/{m}/rmse_std"] = float(np.std(d["rmse"]))
    for src in sources:
        if (src, "MS-DCNN") in scores:
            cnn = np.mean(scores[(src, "MS-DCNN")]["rmse"])
            summary[f"{src}/lr_step_over_cnn"] = float(np.mean(scores[(src, "LR-STEP")]["rmse"]) / cnn)
            summary[f"{src}/tr_step_over_cnn"] = float(np.mean(scores[(src, "Tr-STEP")]["rmse"]) / cnn)
    return summary


def _report_rul_tables(
    reporter: Reporter, scores: dict[tuple[str, str], dict[str, list[float]]], sources: tuple[str, ...], n_seeds: int
) -> None:
    rows = []
    for (src, m), d in scores.items():
        rows.append(
            {
                "label": f"{src} {m}" if len(sources) > 1 else m,
                "source": src,
                "method": m,
                "rmse": round(float(np.mean(d["rmse"])), 3),
                "rmse_std": round(float(np.std(d["rmse"])), 3),
                "phm_score": round(float(np.mean(d["score"])), 1),
                "phm_score_std": round(float(np.std(d["score"])), 1),
                "seeds": len(d["rmse"]),
            }
        )
    reporter.table("rul_methods", rows)
    paper_rows = []
    for m, ref in PAPER_RMSE.items():
        row: dict[str, Any] = {"model": m}
        for src in sources:
            if src in ref:
                row[f"{src} paper"] = ref[src]
                d = scores.get((src, m))
                row[f"{src} here"] = round(float(np.mean(d["rmse"])), 2) if d else None
        paper_rows.append(row)
    reporter.table("rul_vs_paper", paper_rows)


def _pred_true_figure(truth: np.ndarray, preds: dict[str, np.ndarray], src: str) -> dict[str, Any]:
    data = [
        {"type": "scatter", "mode": "markers", "name": m, "x": truth.tolist(), "y": p.tolist()}
        for m, p in preds.items()
    ]
    top = float(max(truth.max(), *(p.max() for p in preds.values())))
    data.append(
        {
            "type": "scatter",
            "mode": "lines",
            "name": "ideal",
            "x": [0, top],
            "y": [0, top],
            "line": {"dash": "dash", "color": "grey"},
        }
    )
    return {
        "data": data,
        "layout": {
            "title": f"{src}: predicted vs true RUL (last window)",
            "xaxis": {"title": "true RUL (capped)"},
            "yaxis": {"title": "predicted RUL"},
        },
    }


# ------------------------------------------------------------------------------------------------
# 2. Latent compass
# ------------------------------------------------------------------------------------------------
def compass_quality(fit: LatentFit, W: Windows, split: str = "holdout") -> dict[str, Any]:
    """Per-unit Spearman(theta, 1 - h), start / end angles, Coble-Hines indicator quality on full units."""
    th, z = fit.theta[split], fit.z[split]
    rho, units, start_deg, end_deg = [], [], [], []
    for u in range(W.n_units):
        rows = W.rows(u)
        rho.append(spearman(th[rows], 1.0 - W.health[rows]))
        units.append(np.convolve(th[rows], np.ones(15) / 15, mode="valid"))  # 15-window moving average
        start_deg.append(np.degrees(th[rows][:N_END].mean()))
        end_deg.append(np.degrees(th[rows][-N_END:].mean()))
    z_end = np.concatenate([z[W.rows(u)][-N_END:] for u in range(W.n_units)])
    z_start = np.concatenate([z[W.rows(u)][:N_END] for u in range(W.n_units)])
    return {
        "spearman": np.asarray(rho),
        "median_spearman": float(np.nanmedian(rho)),
        "start_deg": float(np.mean(np.abs(start_deg))),
        "end_deg": float(np.mean(end_deg)),
        "start_to_e1_deg": float(np.degrees(np.mean(np.abs(wrap(raw_angle(z_start)))))),
        "end_to_e2_deg": float(np.degrees(np.mean(np.abs(wrap(raw_angle(z_end) - np.pi / 2))))),
        "monotonicity": float(np.mean([monotonicity(s) for s in units])),
        "trendability": trendability(units),
        "prognosability": prognosability(units),
    }


def latent_compass(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Latent compass on held-out run-to-failure units; ablations: the other grouping and beta = 0."""
    cfg = StepConfig.from_params(params)
    src = "fd001" if cfg.source == "fd_all" else cfg.source
    seed_everything(cfg.seed)
    prep = prepare(make_dataset(src, cfg.n_units, cfg.seed, N_HOLDOUT), cfg.window)
    other = "time" if cfg.grouping == "rul" else "rul"
    variants = [(f"STEP ({cfg.grouping} groups)", cfg)]
    if cfg.ablations:
        variants += [(f"STEP ({other} groups)", replace(cfg, grouping=other)), ("STEP beta=0", replace(cfg, beta=0.0))]
    rows, summary = [], {}
    truth = np.minimum(prep.test.rul[prep.test.last_rows()], cfg.rul_cap)
    for i, (name, c) in enumerate(variants):
        prefix = "loss" if i == 0 else f"loss_{['main', 'grouping', 'beta0'][i]}"
        fit = train_step(prep, c, reporter, prefix, (i / len(variants), (i + 1) / len(variants)))
        q = compass_quality(fit, prep.holdout)
        pred = lr_on_features(_features(fit, "train"), prep.train, _features(fit, "test"), prep.test, cfg.rul_cap)
        key = ["main", "grouping", "beta0"][i]
        reporter.series(f"spearman/{key}", list(range(len(q["spearman"]))), q["spearman"].tolist())
        rows.append(
            {
                "variant": name,
                "median Spearman(theta, 1-h)": round(q["median_spearman"], 3),
                "|theta| start (deg)": round(q["start_deg"], 1),
                "theta end (deg)": round(q["end_deg"], 1),
                "start to e1 (deg)": round(q["start_to_e1_deg"], 1),
                "end to e2 (deg)": round(q["end_to_e2_deg"], 1),
                "monotonicity": round(q["monotonicity"], 3),
                "trendability": round(q["trendability"], 3),
                "prognosability": round(q["prognosability"], 3),
                "LR-STEP RMSE": round(rmse(pred, truth), 2),
            }
        )
        reporter.table("compass_quality", rows)
        for k in ("median_spearman", "start_deg", "end_deg", "start_to_e1_deg", "end_to_e2_deg"):
            summary[f"{key}/{k}"] = q[k]
        summary[f"{key}/lr_rmse"] = rmse(pred, truth)
        if i == 0:
            reporter.figure("compass_trajectories", _trajectory_figure(fit, prep.holdout))
            reporter.figure("compass_theta_time", _theta_figure(fit, prep.holdout))
        if reporter.should_stop():
            break
    reporter.progress(1.0, "done")
    return summary


def _trajectory_figure(fit: LatentFit, W: Windows, n: int = 6) -> dict[str, Any]:
    z = fit.z["holdout"]
    data = []
    for u in range(min(n, W.n_units)):
        rows = W.rows(u)
        data.append(
            {
                "type": "scatter",
                "mode": "markers+lines",
                "name": f"unit {u}",
                "x": z[rows, 0].tolist(),
                "y": z[rows, 1].tolist(),
                "marker": {"color": W.life[rows].tolist(), "colorscale": "Viridis", "size": 4, "showscale": u == 0},
                "line": {"width": 0.5, "color": "lightgrey"},
            }
        )
    data.append(
        {
            "type": "scatter",
            "mode": "markers+text",
            "name": "prototypes",
            "x": [1, 0],
            "y": [0, 1],
            "text": ["e1 (initial)", "e2 (end)"],
            "marker": {"size": 14, "symbol": "star", "color": "red"},
        }
    )
    return {
        "data": data,
        "layout": {
            "title": "z on (e1, e2), coloured by life fraction t/T",
            "xaxis": {"title": "<z, e1>"},
            "yaxis": {"title": "<z, e2>", "scaleanchor": "x"},
        },
    }


def _theta_figure(fit: LatentFit, W: Windows, n: int = 6) -> dict[str, Any]:
    th = fit.theta["holdout"]
    data = []
    for u in range(min(n, W.n_units)):
        rows = W.rows(u)
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"theta unit {u}",
                "x": W.t[rows].tolist(),
                "y": np.degrees(th[rows]).tolist(),
            }
        )
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"1-h unit {u}",
                "x": W.t[rows].tolist(),
                "y": (1.0 - W.health[rows]).tolist(),
                "yaxis": "y2",
                "line": {"dash": "dot"},
            }
        )
    return {
        "data": data,
        "layout": {
            "title": "compass angle theta(t) and ground-truth damage 1-h(t)",
            "xaxis": {"title": "cycle"},
            "yaxis": {"title": "theta (deg)"},
            "yaxis2": {"title": "1 - h", "overlaying": "y", "side": "right"},
        },
    }


# ------------------------------------------------------------------------------------------------
# 3. Forecasting
# ------------------------------------------------------------------------------------------------
def fit_ar(series: list[np.ndarray], p: int) -> np.ndarray:
    """AR(p) with intercept by pooled least squares: x_t = c + sum_i phi_i x_{t-i}; returns [phi_1..phi_p, c]."""
    rows, y = [], []
    for s in series:
        for t in range(p, len(s)):
            rows.append(s[t - p : t][::-1])
            y.append(s[t])
    return fit_linear(np.asarray(rows), np.asarray(y))


def ar_forecast(coef: np.ndarray, history: np.ndarray, horizon: int) -> np.ndarray:
    """Iterated multi-step forecast x_{t+1..t+horizon} from the last p values of ``history``."""
    p = len(coef) - 1
    buf = list(history[-p:])
    out = []
    for _ in range(horizon):
        x = float(np.dot(coef[:p], buf[::-1][:p]) + coef[p])
        out.append(x)
        buf.append(x)
    return np.asarray(out)


class GRUForecaster(nn.Module):
    """GRU on the last L raw (scaled) sensor cycles -> theta at horizons 1..H (direct multi-output)."""

    def __init__(self, n_channels: int, horizon: int, hidden: int = 32) -> None:
        super().__init__()
        self.gru = nn.GRU(n_channels, hidden, batch_first=True)
        self.out = nn.Linear(hidden, horizon)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, L, C) -> (B, H)
        return self.out(self.gru(x)[0][:, -1])


def _forecast_origins(W: Windows, p: int, H: int, stride: int) -> list[tuple[int, int]]:
    return [(u, i) for u in range(W.n_units) for i in range(p, (W.start[u + 1] - W.start[u]) - H, stride)]


def forecasting(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Multi-step forecasting of the compass angle: AR(p) on theta vs a GRU on raw sensors vs persistence."""
    cfg = StepConfig.from_params(params)
    src = "fd001" if cfg.source == "fd_all" else cfg.source
    seed_everything(cfg.seed)
    prep = prepare(make_dataset(src, cfg.n_units, cfg.seed, N_HOLDOUT), cfg.window)
    fit = train_step(prep, cfg, reporter, "loss", (0.0, 0.6))
    H, p, L = cfg.max_horizon, cfg.ar_order, 30
    th_tr, th_ho = fit.theta["train"], fit.theta["holdout"]
    Wtr, Who = prep.train, prep.holdout
    coef = fit_ar([th_tr[Wtr.rows(u)] for u in range(Wtr.n_units)], p)

    def gru_inputs(W: Windows, cycles: list[np.ndarray], origins: list[tuple[int, int]]) -> torch.Tensor:
        xs = []
        for u, i in origins:
            t = int(W.t[W.start[u] + i])
            idx = np.maximum(np.arange(t - L + 1, t + 1), 0)
            xs.append(cycles[u][idx])
        return torch.from_numpy(np.asarray(xs, dtype=np.float32))

    def targets(th: np.ndarray, W: Windows, origins: list[tuple[int, int]]) -> np.ndarray:
        return np.asarray([th[W.start[u] + i + 1 : W.start[u] + i + 1 + H] for u, i in origins])

    tr_orig = _forecast_origins(Wtr, p, H, 2)
    Xg, Yg = gru_inputs(Wtr, prep.train_cycles, tr_orig), targets(th_tr, Wtr, tr_orig)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    gru = GRUForecaster(Xg.shape[2], H).to(cfg.device)
    opt = torch.optim.AdamW(gru.parameters(), lr=3e-3, weight_decay=0.01)
    Yt = torch.from_numpy(Yg.astype(np.float32))
    for epoch in range(cfg.head_epochs):
        perm = rng.permutation(len(Xg))[:6000]
        tot = 0.0
        for s in range(0, len(perm), 128):
            b = perm[s : s + 128]
            loss = ((gru(Xg[b].to(cfg.device)) - Yt[b].to(cfg.device)) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(b)
        reporter.scalar("forecast_train/gru_mse", epoch + 1, tot / len(perm))
        reporter.progress(0.6 + 0.4 * (epoch + 1) / cfg.head_epochs, f"GRU epoch {epoch + 1}/{cfg.head_epochs}")
    gru.eval()
    ho_orig = _forecast_origins(Who, p, H, 3)
    Y = targets(th_ho, Who, ho_orig)
    with torch.no_grad():
        g_pred = gru(gru_inputs(Who, prep.holdout_cycles, ho_orig).to(cfg.device)).cpu().numpy()
    ar_pred = np.asarray([ar_forecast(coef, th_ho[Who.start[u] : Who.start[u] + i + 1], H) for u, i in ho_orig])
    persist = np.repeat(np.asarray([th_ho[Who.start[u] + i] for u, i in ho_orig])[:, None], H, axis=1)
    err = {
        name: np.degrees(np.sqrt(((P - Y) ** 2).mean(0)))
        for name, P in (("ar_theta", ar_pred), ("gru_raw", g_pred), ("persistence", persist))
    }
    hs = list(range(1, H + 1))
    for name, e in err.items():
        reporter.series(f"forecast/{name}", hs, e.tolist())
    reporter.table(
        "forecast_errors",
        [{"horizon": h, **{f"{k} RMSE (deg)": round(float(v[h - 1]), 2) for k, v in err.items()}} for h in hs],
    )
    reporter.progress(1.0, "done")
    return {f"{k}/rmse_h{h}": float(v[h - 1]) for k, v in err.items() for h in (1, H // 2, H)} | {
        "ar_coef": [round(float(c), 4) for c in coef]
    }


# ------------------------------------------------------------------------------------------------
# 4. Phase / mode separation
# ------------------------------------------------------------------------------------------------
def phase_separation(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """k-means on (theta, r) of held-out windows; ARI / NMI against life-phase quartiles, fault mode, condition."""
    cfg = StepConfig.from_params(params)
    src = "fd003" if cfg.source == "fd_all" else cfg.source
    seed_everything(cfg.seed)
    prep = prepare(make_dataset(src, cfg.n_units, cfg.seed, N_HOLDOUT), cfg.window)
    fit = train_step(prep, cfg, reporter, "loss", (0.0, 0.85))
    W = prep.holdout
    F = _features(fit, "holdout")
    F = (F - F.mean(0)) / (F.std(0) + 1e-12)
    truths = {"life": np.minimum((W.life * 4).astype(int), 3)}
    if len(np.unique(W.fault_mode)) > 1:
        truths["mode"] = W.fault_mode
    if len(np.unique(W.condition)) > 1:
        truths["condition"] = W.condition
    rng = np.random.default_rng(cfg.seed)
    rows, summary, shown = [], {}, None
    for k in range(2, cfg.k_max + 1):
        lab = kmeans(F, k, rng)
        row: dict[str, Any] = {"k": k}
        for t, y in truths.items():
            ari, nmi = adjusted_rand_index(lab, y), normalized_mutual_info(lab, y)
            reporter.scalars(k, {f"phase/ari_{t}": ari, f"phase/nmi_{t}": nmi})
            row[f"ARI {t}"], row[f"NMI {t}"] = round(ari, 3), round(nmi, 3)
            summary[f"k{k}/ari_{t}"], summary[f"k{k}/nmi_{t}"] = ari, nmi
        rows.append(row)
        if k == 4:
            shown = lab
        reporter.progress(0.85 + 0.15 * (k - 1) / (cfg.k_max - 1), f"k-means k={k}")
    reporter.table("phase_scores", rows)
    if shown is None:
        shown = lab
    th, r = np.degrees(fit.theta["holdout"]), fit.r["holdout"]
    for name, colour in (("clusters", shown), ("truth_life", truths["life"])):
        reporter.figure(
            f"phase_{name}",
            {
                "data": [
                    {
                        "type": "scatter",
                        "mode": "markers",
                        "x": th.tolist(),
                        "y": r.tolist(),
                        "marker": {"color": colour.tolist(), "size": 3, "colorscale": "Viridis"},
                    }
                ],
                "layout": {
                    "title": f"(theta, r) coloured by {name.replace('_', ' ')}",
                    "xaxis": {"title": "theta (deg)"},
                    "yaxis": {"title": "r = |z|"},
                },
            },
        )
    reporter.progress(1.0, "done")
    return summary

"""Entry points of the strata experiments: fn(params, reporter) -> summary dict."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from compute.core.reporter import Reporter
from compute.core.runtime import seed_everything

from .config import DataParams, RolloutParams, TrainParams
from .data import CHANNELS, zonal_power
from .energy import EnergyMeter, efficiency
from .rollout import global_step, seam_metric
from .tiles import sample_tiles
from .train import load_or_generate, load_or_train, normalise, splits

PAPER_SIM_DAYS_PER_MWH = 48.0
PAPER_EFFICIENCY_RATIO = 50.0


def _cache(reporter: Reporter):
    return reporter.data_dir / "strata"


def _heatmap_anim(key: str, title: str, series: list[tuple[str, list[np.ndarray]]], labels: list[str]) -> dict:
    """Plotly figure: one heatmap per named series side by side, animated over frames with a slider."""
    n = len(series)
    data, frames = [], []
    zmin = float(min(np.min(f) for _, fs in series for f in fs))
    zmax = float(max(np.max(f) for _, fs in series for f in fs))
    for i, (name, fs) in enumerate(series):
        ax = "" if i == 0 else str(i + 1)
        data.append(
            {
                "type": "heatmap",
                "z": np.round(fs[0], 4).tolist(),
                "name": name,
                "xaxis": f"x{ax}",
                "yaxis": f"y{ax}",
                "zmin": zmin,
                "zmax": zmax,
                "colorscale": "Viridis",
                "showscale": i == n - 1,
            }
        )
    for t, lab in enumerate(labels):
        frames.append({"name": lab, "data": [{"z": np.round(fs[t], 4).tolist()} for _, fs in series]})
    layout: dict[str, Any] = {
        "title": title,
        "sliders": [
            {"steps": [{"label": lab, "method": "animate", "args": [[lab], {"mode": "immediate"}]} for lab in labels]}
        ],
        "updatemenus": [{"type": "buttons", "buttons": [{"label": "play", "method": "animate", "args": [None]}]}],
    }
    for i, (name, _) in enumerate(series):
        ax = "" if i == 0 else str(i + 1)
        layout[f"xaxis{ax}"] = {"domain": [i / n + 0.01, (i + 1) / n - 0.01], "title": name}
        layout[f"yaxis{ax}"] = {"anchor": f"x{ax}", "autorange": "reversed"}
    return {"data": data, "frames": frames, "layout": layout}


# ------------------------------------------------------------------------------------------------
# E1: data generator (the build step)
# ------------------------------------------------------------------------------------------------
def generate_data(params: dict, reporter: Reporter) -> dict:
    """Integrate the moist shallow-water world; budgets, rain fraction, precipitation animation, KE spectrum."""
    p = DataParams.from_params(params)
    seed_everything(p.seed)
    snaps: list[np.ndarray] = []

    def progress(frac: float, frame: np.ndarray) -> None:
        reporter.progress(frac, f"generating {p.days:g} days at {p.nlat}×{2 * p.nlat}")
        snaps.append(frame)

    t0 = time.perf_counter()
    ds, diag, hit = load_or_generate(p, _cache(reporter), progress)
    wall = time.perf_counter() - t0
    hours = np.arange(len(diag["mass"])) * ds.frame_minutes / 60.0
    m0, w0 = diag["mass"][0], diag["water"][0]
    reporter.series("budget/mass_rel_change", hours.tolist(), [(m - m0) / m0 for m in diag["mass"]])
    reporter.series("budget/water_rel_change", hours.tolist(), [(w - w0) / w0 for w in diag["water"]])
    reporter.series("budget/closure_error", hours[1:].tolist(), [e / w0 for e in diag["budget_error"]])
    reporter.series("rain/area_fraction", hours.tolist(), diag["rain_fraction"])
    idx = np.linspace(0, len(ds.frames) - 1, min(12, len(ds.frames))).astype(int)
    lab = [f"{hours[i]:.1f} h" for i in idx]
    reporter.figure(
        "precip_anim",
        _heatmap_anim(
            "precip_anim",
            "Precipitation P and vorticity proxy ∂v/∂x",
            [
                ("P", [ds.frames[i, 4, 0] for i in idx]),
                ("∂v/∂x", [np.gradient(ds.frames[i, 2, 0], axis=-1) for i in idx]),
            ],
            lab,
        ),
    )
    u, v = ds.frames[-1, 1, 0], ds.frames[-1, 2, 0]
    ke = zonal_power(u, ds.lats) + zonal_power(v, ds.lats)
    reporter.series("spectrum/kinetic_energy", list(range(1, len(ke))), ke[1:].tolist())
    n_steps = len(ds.frames) - 1
    summary = {
        "frames": len(ds.frames),
        "grid": f"{p.nlat}x{2 * p.nlat}",
        "cached": hit,
        "wall_seconds": wall,
        "solver_seconds_per_sim_day": ds.solver_seconds_per_day,
        "mass_rel_drift": float(abs(diag["mass"][-1] - m0) / m0),
        "water_budget_rel_error": float(np.max(np.abs(diag["budget_error"])) / w0) if diag["budget_error"] else 0.0,
        "rain_fraction_mean": float(np.mean(diag["rain_fraction"])),
        "sim_days": n_steps * ds.frame_minutes / 1440.0,
    }
    reporter.table("data_summary", [{"quantity": k, "value": v} for k, v in summary.items()])
    return summary


# ------------------------------------------------------------------------------------------------
# E2: tile training
# ------------------------------------------------------------------------------------------------
def _train_reporting(p: TrainParams, reporter: Reporter, ds, prefix: str = ""):
    def report(step: int, m: dict) -> None:
        reporter.scalars(step, {f"{prefix}{k}": v for k, v in m.items() if k != "time/s"})
        reporter.progress(min(0.99, step / p.steps) * (0.6 if prefix else 1.0), f"training step {step}/{p.steps}")

    return load_or_train(p, ds, _cache(reporter), report, reporter.should_stop)


def train_tiles(params: dict, reporter: Reporter) -> dict:
    """Train the tile model on random T×T tiles; loss curves, 1-step skill vs persistence, sample tiles."""
    p = TrainParams.from_params(params)
    seed_everything(p.seed)
    reporter.progress(0.0, "data (build step)")
    ds, _, _ = load_or_generate(p, _cache(reporter))
    model, info, hit = _train_reporting(p, reporter, ds)
    xn, inc = normalise(ds)
    _, _, te = splits(len(xn), 1440.0 / ds.frame_minutes)
    rng = np.random.default_rng(p.seed + 99)
    idx = rng.integers(te.start, te.stop - 1, size=32)
    x, y, la, lo = sample_tiles(xn, ds.lats, ds.lons, idx, p.tile, rng)
    with torch.no_grad():
        pred = model(torch.from_numpy(x), torch.from_numpy(la), torch.from_numpy(lo)).numpy()
    inc5 = inc[None, :, None, None, None]
    err = (pred * inc5 - (y - x)) * ds.std[None, :, None, None, None]
    pers = (y - x) * ds.std[None, :, None, None, None]
    rows = []
    for i, c in enumerate(CHANNELS):
        r_m, r_p = float(np.sqrt((err[:, i] ** 2).mean())), float(np.sqrt((pers[:, i] ** 2).mean()))
        rows.append({"variable": c, "rmse_model": r_m, "rmse_persistence": r_p, "ratio": r_m / max(r_p, 1e-30)})
    reporter.table("one_step", rows)
    q = CHANNELS.index("q")
    s = ds.std[q]
    reporter.figure(
        "sample_tiles",
        _heatmap_anim(
            "sample_tiles",
            "q increment on test tiles: truth, model, error",
            [
                ("truth", [(y[k, q, 0] - x[k, q, 0]) * s for k in range(4)]),
                ("model", [pred[k, q, 0] * inc[q] * s for k in range(4)]),
                ("error", [err[k, q, 0] for k in range(4)]),
            ],
            [f"tile {k}" for k in range(4)],
        ),
    )
    summary = {
        "params": info["params"],
        "cached": hit,
        "train_seconds": info["train_seconds"],
        **{f"ratio_{r['variable']}": r["ratio"] for r in rows},
    }
    reporter.progress(1.0, "done")
    return summary


# ------------------------------------------------------------------------------------------------
# E3: global rollout
# ------------------------------------------------------------------------------------------------
def _area_rmse(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """cos(lat)-weighted RMSE per variable over (C, D, nlat, nlon); w (nlat,) with pole rows at 0."""
    return np.sqrt(((a - b) ** 2 * w[None, None, :, None]).sum(axis=(1, 2, 3)) / (w.sum() * a.shape[1] * a.shape[3]))


def global_rollout(params: dict, reporter: Reporter) -> dict:
    """Roll the tile model out over the globe by blended tiles; RMSE/ACC vs lead, seams, spectra, efficiency."""
    p = RolloutParams.from_params(params)
    seed_everything(p.seed)
    torch.set_num_threads(1)
    reporter.progress(0.0, "data (build step)")
    ds, _, _ = load_or_generate(p, _cache(reporter))
    model, info, _ = _train_reporting(p, reporter, ds, prefix="train_")
    tile = p.eval_tile or p.tile  # rolling out with a larger tile than trained on probes grid invariance
    xn, inc = normalise(ds)
    fpd = 1440.0 / ds.frame_minutes
    tr, _, te = splits(len(xn), fpd)
    n_steps = int(min(round(p.lead_hours * 60 / ds.frame_minutes), len(te) - 1))
    w = np.cos(ds.lats)
    w[:2] = 0.0
    w[-2:] = 0.0
    clim = xn[tr.start : tr.stop].mean(axis=0)  # per-grid-point training mean
    lo_, hi_ = xn[tr.start : tr.stop].min(axis=(0, 2, 3, 4)), xn[tr.start : tr.stop].max(axis=(0, 2, 3, 4))
    half = (hi_ - lo_) / 2
    mid = (hi_ + lo_) / 2

    # seams after one step, with and without blending, over a few initial times
    seams = {}
    for o in sorted({0, p.overlap}):
        vals = []
        for t in range(te.start, te.start + min(6, len(te) - 1), 2):
            step = global_step(model, xn[t], ds.lats, ds.lons, tile, o, p.window, inc)
            vals.append(seam_metric(step - xn[t], tile, o))
        seams[o] = float(np.mean(vals))
    truth_seam = float(
        np.mean([seam_metric(xn[t + 1] - xn[t], tile, p.overlap) for t in range(te.start, te.start + 4)])
    )
    reporter.table(
        "seams",
        [{"overlap": o, "window": p.window if o else "none", "seam_metric": v} for o, v in seams.items()]
        + [{"overlap": "truth", "window": "-", "seam_metric": truth_seam}],
    )

    x = xn[te.start].copy()
    anim_idx = set(np.linspace(0, n_steps, min(9, n_steps + 1)).astype(int).tolist())
    anim_t, anim_m, anim_lab = [], [], []
    qi = CHANNELS.index("q")
    rm_all, spec_m, spec_t = [], None, None
    base_last = (float("nan"), float("nan"), float("nan"))
    max_ratio = 0.0
    meter = EnergyMeter(p.watts)
    t_model = 0.0
    for s in range(n_steps + 1):
        truth = xn[te.start + s]
        if s in anim_idx:
            anim_t.append(truth[qi, 0] * ds.std[qi] + ds.mean[qi])
            anim_m.append(x[qi, 0] * ds.std[qi] + ds.mean[qi])
            anim_lab.append(f"+{s * ds.frame_minutes / 60:.1f} h")
        if s:
            phys = ds.std[:, None, None, None]
            r_m = _area_rmse(x * phys, truth * phys, w)
            r_p = _area_rmse(xn[te.start] * phys, truth * phys, w)
            r_c = _area_rmse(clim * phys, truth * phys, w)
            a_m, a_t = (x - clim)[0, 0], (truth - clim)[0, 0]
            acc = float(
                (a_m * a_t * w[:, None]).sum() / np.sqrt((a_m**2 * w[:, None]).sum() * (a_t**2 * w[:, None]).sum())
            )
            hours = s * ds.frame_minutes / 60.0
            vals = {f"rmse/{c}": float(r_m[i]) for i, c in enumerate(CHANNELS)}
            vals.update(
                {
                    "rmse_h/emulator": float(r_m[0]),
                    "rmse_h/persistence": float(r_p[0]),
                    "rmse_h/climatology": float(r_c[0]),
                    "acc/h": acc,
                    "rmse_q/emulator": float(r_m[qi]),
                    "rmse_q/persistence": float(r_p[qi]),
                    "rmse_q/climatology": float(r_c[qi]),
                    "rain/emulator": float((x[4] * ds.std[4] + ds.mean[4] > 1e-4).mean()),
                    "rain/truth": float((truth[4] * ds.std[4] + ds.mean[4] > 1e-4).mean()),
                    "stability/max_over_range": float(
                        np.max(np.abs(x - mid[:, None, None, None]) / half[:, None, None, None])
                    ),
                }
            )
            reporter.scalars(hours, vals)
            rm_all.append(r_m)
            base_last = (float(r_p[0]), float(r_c[0]), acc)
            max_ratio = max(max_ratio, vals["stability/max_over_range"])
            if s <= 6:
                pm, pt = zonal_power(x[1, 0], ds.lats), zonal_power(truth[1, 0], ds.lats)
                spec_m = pm if spec_m is None else spec_m + pm
                spec_t = pt if spec_t is None else spec_t + pt
        if s == n_steps or not np.all(np.isfinite(x)):
            break
        t1 = time.perf_counter()
        with meter:
            x = global_step(model, x, ds.lats, ds.lons, tile, p.overlap, p.window, inc)
        t_model += time.perf_counter() - t1
        reporter.progress(0.6 + 0.4 * s / n_steps, f"rollout step {s + 1}/{n_steps}")
        if reporter.should_stop():
            break
    finite = bool(np.all(np.isfinite(x)))
    reporter.figure(
        "rollout_anim",
        _heatmap_anim("rollout_anim", "q: truth vs emulator", [("truth", anim_t), ("emulator", anim_m)], anim_lab),
    )
    # N/p, capped at the data's largest resolved zonal wavenumber (the SHT truncates at l < (nlat+1)//2)
    k_patch = min(len(spec_t) - 1, ds.frames.shape[-1] // p.patch, (ds.frames.shape[-2] + 1) // 2 - 1)
    reporter.series("spectrum/truth_u", list(range(1, len(spec_t))), spec_t[1:].tolist())
    reporter.series("spectrum/emulator_u", list(range(1, len(spec_m))), spec_m[1:].tolist())
    spectral_ratio = float(spec_m[k_patch] / max(spec_t[k_patch], 1e-30))
    # efficiency: the emulator's rollout vs the solver that generated the data, at the same grid
    sim_days = (s if s else 1) * ds.frame_minutes / 1440.0
    emu = efficiency(sim_days, meter.seconds or t_model, meter.joules or p.watts * t_model)
    sol_seconds = ds.solver_seconds_per_day
    sol = efficiency(1.0, sol_seconds, p.watts * sol_seconds)
    ratio = emu["sim_days_per_kwh"] / sol["sim_days_per_kwh"]
    reporter.table(
        "efficiency",
        [
            {"system": "emulator (tiles, this run)", **emu, "power_source": meter.source},
            {"system": "solver (spectral SW + moisture)", **sol, "power_source": "assumed"},
            {
                "system": "paper: STRATA on H100s",
                "sim_days_per_day": 741.0,
                "sim_days_per_kwh": 0.048,
                "power_source": "paper",
            },
            {
                "system": "paper: SCREAM",
                "sim_days_per_day": float("nan"),
                "sim_days_per_kwh": 0.001,
                "power_source": "paper",
            },
        ],
    )
    verdict = (
        "emulator wins"
        if ratio > 1
        else "the solver wins at this toy scale (the paper's ≈50× needs km-scale "
        "physics, whose cost grows much faster than the emulator's)"
    )
    reporter.log(f"emulator/solver energy efficiency = {ratio:.3g}× (paper ≈{PAPER_EFFICIENCY_RATIO:g}×): {verdict}")
    rm = np.array(rm_all) if rm_all else np.zeros((1, len(CHANNELS)))
    summary = {
        "steps": int(s),
        "finite": finite,
        "max_over_training_range": max_ratio,
        "rmse_h_first": float(rm[0, 0]),
        "rmse_h_last": float(rm[-1, 0]),
        "rmse_grows": bool(rm[-1, 0] > rm[0, 0]),
        "rmse_h_persistence_last": base_last[0],
        "rmse_h_climatology_last": base_last[1],
        "acc_h_last": base_last[2],
        "seam_no_overlap": seams[0],
        "seam_blended": seams[p.overlap],
        "seam_truth": truth_seam,
        "spectral_ratio_at_N_over_p": spectral_ratio,
        "patch_wavenumber": int(k_patch),
        "emulator_sim_days_per_kwh": emu["sim_days_per_kwh"],
        "solver_sim_days_per_kwh": sol["sim_days_per_kwh"],
        "emulator_over_solver_efficiency": ratio,
        "paper_efficiency_ratio": PAPER_EFFICIENCY_RATIO,
        "params": info["params"],
    }
    reporter.table("rollout_summary", [{"quantity": k, "value": v} for k, v in summary.items()])
    reporter.progress(1.0, "done")
    return summary


# ------------------------------------------------------------------------------------------------
# E4: mini iso-FLOP study
# ------------------------------------------------------------------------------------------------
def iso_flop(params: dict, reporter: Reporter) -> dict:
    """For each FLOP budget, train widths w at steps = budget / (3·forward FLOPs per batch); loss vs parameters."""
    from .config import IsoFlopParams
    from .flops import forward_flops
    from .model import n_params
    from .train import one_step_rmse, train

    p = IsoFlopParams.from_params(params)
    seed_everything(p.seed)
    ds, _, _ = load_or_generate(p, _cache(reporter))
    xn, inc = normalise(ds)
    _, va, _ = splits(len(xn), 1440.0 / ds.frame_minutes)
    rows, best = [], {}
    total = len(p.budgets) * len(p.widths)
    k = 0
    for b_i, budget in enumerate(p.budgets):
        xs, ys = [], []
        for w in p.widths:
            tp = TrainParams(
                **{
                    **{f: getattr(p, f) for f in DataParams.__dataclass_fields__},
                    "tile": p.tile,
                    "patch": p.patch,
                    "width": w,
                    "depth": p.depth,
                    "batch": p.batch,
                    "lr": p.lr,
                    "steps": 1,
                }
            )
            fwd = forward_flops(tp.model(), p.tile, p.batch)
            steps = int(budget / (3 * fwd))
            k += 1
            if steps < 5:
                reporter.log(f"budget {budget:.2g}: width {w} gets only {steps} steps; skipped")
                continue
            tp.steps = steps
            reporter.progress(k / total, f"budget {budget:.2g}, width {w}: {steps} steps")
            model, info = train(tp, ds, should_stop=reporter.should_stop)
            vidx = np.random.default_rng(7).integers(va.start, va.stop - 1, size=32)
            _, _, vloss = one_step_rmse(model, xn, inc, ds, vidx, p.tile, np.random.default_rng(3))
            n = n_params(model)
            fpp = fwd / p.batch / (p.tile * p.tile)
            rows.append(
                {
                    "budget": budget,
                    "width": w,
                    "params": n,
                    "steps": steps,
                    "val_loss": vloss,
                    "flops_per_grid_point": fpp,
                }
            )
            xs.append(n)
            ys.append(vloss)
            reporter.series(f"isoflop/budget_{b_i}", [n], [vloss])
            if reporter.should_stop():
                break
        if ys:
            j = int(np.argmin(ys))
            best[budget] = rows[-len(ys) + j]
            interior = 0 < j < len(ys) - 1
            reporter.log(
                f"budget {budget:.2g}: optimum width {best[budget]['width']} "
                f"({'interior: U-shape' if interior else 'at the edge of the sweep'})"
            )
    reporter.table("isoflop", rows)
    reporter.table(
        "isoflop_optimum",
        [{"budget": b, **r, "interior": 0 < p.widths.index(r["width"]) < len(p.widths) - 1} for b, r in best.items()],
    )
    reporter.series("flops/per_grid_point", [r["params"] for r in rows], [r["flops_per_grid_point"] for r in rows])
    return {f"optimum_width_{i}": r["width"] for i, r in enumerate(best.values())} | {
        f"optimum_flops_per_grid_point_{i}": r["flops_per_grid_point"] for i, r in enumerate(best.values())
    }

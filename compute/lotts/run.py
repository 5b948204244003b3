"""Entry points of the lotts experiments: fn(params, reporter) -> summary dict."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from compute.core.reporter import Reporter
from compute.core.runtime import seed_everything

from .config import LocalizationConfig, SearchConfig, SensitivityConfig, WorldConfig
from .data import COLOUR_NAMES, SHAPES
from .diffusion import T_TRAIN, Sampler
from .experiments import ABLATIONS, localization_metrics, nfe_at_quality, planted_set, quality_vs_nfe
from .search import Node, RefineSpec, grow, sample_candidates
from .world import World, build_world

METHOD_LABEL = {
    "bon": "Best-of-N",
    "lotts": "LoTTS",
    "resample": "Resampling (M = 1)",
    "random_mask": "random-mask LoTTS",
}
METRICS = {"heldout": "held-out CNN score", "template": "template residual (↓)", "select": "selection-verifier score"}


def _world(cfg: WorldConfig, reporter: Reporter) -> World:
    cfg = WorldConfig(**{k: getattr(cfg, k) for k in WorldConfig.__dataclass_fields__})
    world = build_world(cfg, reporter.data_dir / "lotts", lambda f, m: reporter.progress(0.9 * f, m))
    reporter.log(("loaded cached" if world.cached else "trained") + f" world s{cfg.size} w{cfg.width} ({cfg.key()})")
    return world


def _img(x: torch.Tensor) -> list:
    """(3, S, S) in [-1, 1] → nested uint8 H×W×3 list for a Plotly image trace."""
    return ((x.clamp(-1, 1) + 1) * 127.5).round().byte().permute(1, 2, 0).tolist()


def _gallery(rows: list[list[tuple[str, Any]]], title: str) -> dict:
    """A Plotly grid of images / heatmaps: rows of (label, tensor (3,S,S) image or (S,S) map)."""
    n_r, n_c = len(rows), max(len(r) for r in rows)
    data, layout = [], {"title": title, "height": 150 * n_r + 60, "showlegend": False}
    for i, row in enumerate(rows):
        for j, (label, z) in enumerate(row):
            k = i * n_c + j + 1
            ax = "" if k == 1 else str(k)
            if z.dim() == 3:
                data.append({"type": "image", "z": _img(z), "xaxis": f"x{ax}", "yaxis": f"y{ax}", "name": label})
            else:
                data.append(
                    {
                        "type": "heatmap",
                        "z": np.round(z.numpy(), 4).tolist(),
                        "xaxis": f"x{ax}",
                        "yaxis": f"y{ax}",
                        "showscale": False,
                        "colorscale": "Magma",
                        "name": label,
                    }
                )
            layout[f"xaxis{ax}"] = {
                "domain": [j / n_c + 0.005, (j + 1) / n_c - 0.005],
                "showticklabels": False,
                "title": {"text": label, "font": {"size": 9}},
            }
            layout[f"yaxis{ax}"] = {
                "domain": [1 - (i + 1) / n_r + 0.02, 1 - i / n_r - 0.02],
                "showticklabels": False,
                "autorange": "reversed",
                "anchor": f"x{ax}",
            }
    return {"data": data, "layout": layout}


# ------------------------------------------------------------------------------------------------
# Exp. 0: the build step
# ------------------------------------------------------------------------------------------------
def build(params: dict, reporter: Reporter) -> dict:
    """Train (or load) the toy T2I denoiser and both verifiers; report curves, verifier accuracy, samples."""
    cfg = WorldConfig.from_params(params)
    t0 = time.perf_counter()
    world = _world(cfg, reporter)
    loss = world.history["loss"]
    stride = max(1, len(loss) // 500)
    sm = np.convolve(loss, np.ones(25) / 25, mode="same") if len(loss) > 25 else np.asarray(loss)
    reporter.series("train/loss", list(range(0, len(loss), stride)), [float(v) for v in sm[::stride]])
    # verifier accuracy on fresh renders and a few samples from the denoiser
    from .data import sample_batch
    from .verifiers import HEADS, split_logp, targets

    rng = np.random.default_rng([params.get("seed", 0), 99])
    b = sample_batch(256, cfg.size, rng, 0.5)
    x = torch.as_tensor(b.images)
    rows = []
    for name, net in (("selection", world.select), ("held-out", world.heldout)):
        lp = split_logp(net(x))
        tg = targets(b.attrs, ~b.defective)
        rows.append(
            {
                "verifier": name,
                **{f"acc_{k}": round(float((lp[k].argmax(1) == tg[k]).float().mean()), 3) for k in HEADS},
            }
        )
    reporter.table("verifiers", rows)
    sampler = Sampler(world.net, 20, 3.0)
    from .experiments import evaluate, pick_prompts

    attrs = pick_prompts(8, params.get("seed", 0))
    X, _, per = sample_candidates(sampler, attrs, 1, params.get("seed", 0), world.select)
    ev = evaluate(world, X[:, 0], attrs)
    reporter.figure(
        "samples",
        _gallery(
            [[(a.caption(), X[i, 0]) for i, a in enumerate(attrs)]], "samples (“… high quality”, CFG 3, 20 DDIM steps)"
        ),
    )
    summary = {
        "cached": world.cached,
        "params_M": round(sum(p.numel() for p in world.net.parameters()) / 1e6, 3),
        "final_loss": round(float(np.mean(loss[-100:])), 4),
        "denoiser_seconds": round(world.history.get("denoiser_seconds", 0.0), 1),
        "sample_heldout_p_clean": round(float(ev["p_clean"].mean()), 3),
        "sample_template_residual": round(float(ev["template"].mean()), 4),
        "nfe_per_sample": per,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    reporter.table("world", [{"key": k, "value": v} for k, v in summary.items()])
    reporter.progress(1.0, "world ready")
    return summary


# ------------------------------------------------------------------------------------------------
# Exp. 1: quality vs NFE
# ------------------------------------------------------------------------------------------------
def _ci(v: np.ndarray) -> float:
    return float(1.96 * v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0


def quality(params: dict, reporter: Reporter) -> dict:
    """Held-out quality vs NFE: Best-of-N, LoTTS, Resampling and random-mask LoTTS at matched budgets."""
    cfg = SearchConfig.from_params(params)
    seed = int(params.get("seed", 0))
    seed_everything(seed)
    world = _world(cfg, reporter)
    t_start = time.perf_counter()
    run = quality_vs_nfe(world, cfg, seed, lambda f, m: reporter.progress(0.1 + 0.85 * f, m))
    res = {"bon": run.bon, **run.methods}
    rows, fig = (
        [],
        {
            "data": [],
            "layout": {
                "title": "held-out CNN score vs NFE (mean ± 95 % CI over prompts; CFG step = 2 NFE)",
                "xaxis": {"type": "log", "title": "NFE per prompt"},
            },
        },
    )
    for m, r in res.items():
        for metric in METRICS:
            v = getattr(r, metric).mean(1)
            reporter.series(f"{metric}/{m}", r.nfe, [float(a) for a in v])
        fig["data"].append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": METHOD_LABEL[m],
                "x": r.nfe,
                "y": [float(a) for a in r.heldout.mean(1)],
                "error_y": {"type": "data", "array": [_ci(a) for a in r.heldout]},
            }
        )
        budgets = cfg.bon_n if m == "bon" else cfg.lotts_k
        for i, n in enumerate(budgets):
            rows.append(
                {
                    "method": METHOD_LABEL[m],
                    "N or k": n,
                    "NFE": round(r.nfe[i], 1),
                    "held-out": round(float(r.heldout[i].mean()), 3),
                    "±95%": round(_ci(r.heldout[i]), 3),
                    "held-out p(clean)": round(float(r.p_clean[i].mean()), 3),
                    "template residual": round(float(r.template[i].mean()), 4),
                    "selection": round(float(r.select[i].mean()), 3),
                }
            )
    reporter.figure("quality_ci", fig)
    reporter.table("quality", rows)
    # speed-up at equal held-out quality
    speed_rows, summary = [], {}
    for metric, sign in (("heldout", 1.0), ("template", -1.0)):
        qb = sign * getattr(run.bon, metric).mean(1)
        ql = sign * getattr(run.methods["lotts"], metric).mean(1)
        for i, N in enumerate(cfg.bon_n):
            if N < 4:
                continue
            need = nfe_at_quality(run.methods["lotts"].nfe, ql, float(qb[i]))
            speed_rows.append(
                {
                    "metric": METRICS[metric],
                    "Best-of-N N": N,
                    "NFE Best-of-N": round(run.bon.nfe[i], 1),
                    "NFE LoTTS to match": None if need is None else round(need, 1),
                    "speed-up": None if need is None else round(run.bon.nfe[i] / need, 2),
                }
            )
            if need is not None:
                summary[f"speedup_{metric}_N{N}"] = round(run.bon.nfe[i] / need, 2)
        for j, k in enumerate(cfg.lotts_k):
            need = nfe_at_quality(run.bon.nfe, qb, float(ql[j]))
            label = (
                f"≥ {run.bon.nfe[-1] / run.methods['lotts'].nfe[j]:.2f} (Best-of-N never reaches it)"
                if need is None
                else round(need / run.methods["lotts"].nfe[j], 2)
            )
            speed_rows.append(
                {
                    "metric": METRICS[metric],
                    "LoTTS k": k,
                    "NFE LoTTS": round(run.methods["lotts"].nfe[j], 1),
                    "NFE Best-of-N to match": need and round(need, 1),
                    "speed-up": label,
                }
            )
    reporter.table("speedup", speed_rows)
    # matched-NFE ordering at each LoTTS budget: interpolate the other curves at LoTTS's NFE
    order_rows = []
    for j, k in enumerate(cfg.lotts_k):
        x = run.methods["lotts"].nfe[j]
        row = {"k": k, "NFE": round(x, 1)}
        for m, r in res.items():
            row[METHOD_LABEL[m]] = round(float(np.interp(np.log(x), np.log(r.nfe), r.heldout.mean(1))), 3)
        order_rows.append(row)
    reporter.table("ordering", order_rows)
    reporter.table("consistency", [{"measure": k, "value": round(v, 6)} for k, v in run.consistency.items()])
    reporter.table(
        "nfe_counter",
        [{"operation": "one candidate (S·CFG)", "NFE": run.nfe_sample}]
        + [
            {"operation": f"{METHOD_LABEL[m]} k={k}", "NFE": round(r.nfe[j], 1)}
            for m, r in run.methods.items()
            for j, k in enumerate(cfg.lotts_k)
        ]
        + [{"operation": "total UNet image-forwards this run", "NFE": world.net.nfe}],
    )
    # gallery: candidate → mask → refined (best LoTTS child of the first candidate)
    rows_g = []
    for p in range(min(cfg.gallery, len(run.attrs))):
        tree = run.trees["lotts"][p][0]
        if not tree.root.children:
            continue
        child = max(tree.root.children, key=lambda n: n.score)
        rows_g.append(
            [
                (f"{run.attrs[p].caption()} s={tree.root.score:.1f}", tree.root.x),
                ("mask", child.mask[0]),
                (f"refined s={child.score:.1f}", child.x),
                ("|Δ|", (child.x - tree.root.x).abs().mean(0)),
            ]
        )
    if rows_g:
        reporter.figure("gallery", _gallery(rows_g, "candidate → LoTTS mask → refined"))
    i8 = cfg.bon_n.index(8) if 8 in cfg.bon_n else len(cfg.bon_n) - 1
    k2 = cfg.lotts_k.index(2) if 2 in cfg.lotts_k else 0
    summary.update(
        {
            f"heldout_bon_N{cfg.bon_n[i8]}": round(float(run.bon.heldout[i8].mean()), 3),
            f"heldout_lotts_k{cfg.lotts_k[k2]}": round(float(run.methods["lotts"].heldout[k2].mean()), 3),
            f"nfe_lotts_k{cfg.lotts_k[k2]}": round(run.methods["lotts"].nfe[k2], 1),
            "max_change_outside_mask_pre_holistic": run.consistency["max_abs_change_outside_before_holistic"],
            "total_nfe": world.net.nfe,
            "seconds": round(time.perf_counter() - t_start, 1),
        }
    )
    for m in ("lotts", "resample", "random_mask"):
        summary[f"heldout_at_k{cfg.lotts_k[k2]}_{m}"] = order_rows[k2][METHOD_LABEL[m]]
    reporter.progress(1.0, "done")
    return summary


# ------------------------------------------------------------------------------------------------
# Exp. 2: localization
# ------------------------------------------------------------------------------------------------
def localization(params: dict, reporter: Reporter) -> dict:
    """Planted-defect AUROC of P and IoU of the top-r mask; per timestep/layer; ablations of ①–④."""
    cfg = LocalizationConfig.from_params(params)
    seed = int(params.get("seed", 0))
    seed_everything(seed)
    world = _world(cfg, reporter)
    reporter.progress(0.9, f"localizing {cfg.n_images} planted defects")
    ps = planted_set(cfg.n_images, cfg.size, seed)
    out = localization_metrics(world, ps, cfg.r, cfg.lam, tuple(cfg.loc_t), cfg.layers, seed, cfg.dilate)
    abl = [
        {"variant": k, "AUROC": round(v["auroc"], 3), "IoU": round(v["iou"], 3), "recall": round(v["recall"], 3)}
        for k, v in out["ablations"].items()
    ]
    abl.append({"variant": "random mask (same r)", "AUROC": 0.5, "IoU": round(out["random_iou"], 3), "recall": cfg.r})
    abl.append({"variant": "IoU ceiling at this r (|true| / |M|)", "IoU": round(out["iou_ceiling"], 3)})
    reporter.table("ablations", abl)
    per_rows = [
        {"t": t, "layer": layer, "AUROC": round(v["auroc"], 3), "IoU": round(v["iou"], 3)}
        for (t, layer), v in sorted(out["per_step"].items())
    ]
    reporter.table("per_step", per_rows)
    for (t, layer), v in sorted(out["per_step"].items()):
        reporter.scalar(f"auroc/{layer}", t, v["auroc"])
    reporter.table(
        "by_kind",
        [{"defect": k, "AUROC": round(v["auroc"], 3), "IoU": round(v["iou"], 3)} for k, v in out["by_kind"].items()],
    )
    full = out["full"]
    rows_g = []
    for i in range(min(cfg.gallery, len(ps.attrs))):
        rows_g.append(
            [
                (f"{ps.kinds[i]}: {ps.attrs[i].caption()}", ps.x[i]),
                ("true mask", torch.as_tensor(ps.masks[i].astype(np.float32))),
                (f"P (AUROC {full['auroc_each'][i]:.2f})", torch.as_tensor(full["scores"][i])),
                (f"M (IoU {full['iou_each'][i]:.2f})", torch.as_tensor(full["M"][i].astype(np.float32))),
            ]
        )
    reporter.figure("heatmaps", _gallery(rows_g, "planted defect → true mask → P → M"))
    reporter.progress(1.0, "done")
    return {
        "auroc": round(full["auroc"], 3),
        "iou": round(full["iou"], 3),
        "random_iou": round(out["random_iou"], 3),
        "iou_ceiling": round(out["iou_ceiling"], 3),
        "recall": round(full["recall"], 3),
        "loc_nfe_per_image": out["loc_nfe_per_image"],
        **{
            f"auroc_{k.split()[0]}_{k.split()[1]}": round(v["auroc"], 3)
            for k, v in out["ablations"].items()
            if k.startswith("no")
        },
    }


# ------------------------------------------------------------------------------------------------
# Exp. 3: sensitivity
# ------------------------------------------------------------------------------------------------
def sensitivity(params: dict, reporter: Reporter) -> dict:
    """LoTTS held-out quality over a grid of two knobs; k is set so the NFE stays within Best-of-N's budget."""
    cfg = SensitivityConfig.from_params(params)
    seed = int(params.get("seed", 0))
    seed_everything(seed)
    world = _world(cfg, reporter)
    sampler = Sampler(world.net, cfg.steps, cfg.cfg_scale)
    from .experiments import evaluate, pick_prompts

    attrs = pick_prompts(cfg.n_prompts, seed)
    n_max = max(cfg.budget_bon, 1)
    X, S, per = sample_candidates(sampler, attrs, n_max, seed, world.select)
    budget = cfg.budget_bon * per
    bon_q = float(evaluate(world, X[torch.arange(len(attrs)), S.argmax(1)], attrs)["heldout"].mean())
    grid = np.full((len(cfg.y_values), len(cfg.x_values)), np.nan)
    rows = []
    n_cells = len(cfg.x_values) * len(cfg.y_values)
    for iy, yv in enumerate(cfg.y_values):
        for ix, xv in enumerate(cfg.x_values):
            reporter.progress(
                0.1 + 0.85 * (iy * len(cfg.x_values) + ix) / n_cells, f"{cfg.grid_y}={yv}, {cfg.grid_x}={xv}"
            )
            if reporter.should_stop():
                return {"cancelled": True}
            knobs = {"r": cfg.r, "t0_frac": cfg.t0_frac, "h_hol": cfg.h_hol, "k": None, cfg.grid_x: xv}
            knobs[cfg.grid_y] = yv
            t0 = int(round(knobs["t0_frac"] * T_TRAIN))
            spec = RefineSpec(
                "lotts",
                cfg.branch,
                cfg.depth,
                knobs["r"],
                t0,
                int(knobs["h_hol"]),
                cfg.lam,
                tuple(cfg.loc_t),
                cfg.layers,
                0,
                cfg.propagation == "sa",
            )
            one = 2 * len(cfg.loc_t) + cfg.branch * sampler.cfg_factor * (
                len(sampler.restart_timesteps(t0)) + int(knobs["h_hol"])
            )
            k = int(knobs["k"]) if knobs["k"] else max(1, int(budget // (per + one)))
            k = min(k, n_max)
            roots = [Node(X[p, j], float(S[p, j]), 0, per) for p in range(len(attrs)) for j in range(k)]
            keys = [(p, j) for p in range(len(attrs)) for j in range(k)]
            trees = grow(sampler, roots, [attrs[p] for p, _ in keys], spec, seed, keys, world.select)
            best = [
                max((t.best() for t in trees[p * k : (p + 1) * k]), key=lambda n: n.score) for p in range(len(attrs))
            ]
            q = float(evaluate(world, torch.stack([b.x for b in best]), attrs)["heldout"].mean())
            nfe = float(np.mean([sum(t.nfe() for t in trees[p * k : (p + 1) * k]) for p in range(len(attrs))]))
            grid[iy, ix] = q
            rows.append(
                {
                    cfg.grid_y: yv,
                    cfg.grid_x: xv,
                    "k": k,
                    "NFE": round(nfe, 1),
                    "held-out": round(q, 3),
                    "Best-of-N at budget": round(bon_q, 3),
                }
            )
    reporter.table("grid", rows)
    reporter.figure(
        "heatmap",
        {
            "data": [
                {
                    "type": "heatmap",
                    "z": np.round(grid, 3).tolist(),
                    "x": [str(v) for v in cfg.x_values],
                    "y": [str(v) for v in cfg.y_values],
                    "colorscale": "Viridis",
                }
            ],
            "layout": {
                "title": f"LoTTS held-out score (Best-of-{cfg.budget_bon} = {bon_q:.3f}, budget {budget:.0f} NFE)",
                "xaxis": {"title": cfg.grid_x},
                "yaxis": {"title": cfg.grid_y},
            },
        },
    )
    reporter.progress(1.0, "done")
    return {
        "best": round(float(np.nanmax(grid)), 3),
        "worst": round(float(np.nanmin(grid)), 3),
        "bon_at_budget": round(bon_q, 3),
        "budget_nfe": round(budget, 1),
    }


__all__ = ["build", "quality", "localization", "sensitivity", "ABLATIONS", "SHAPES", "COLOUR_NAMES"]

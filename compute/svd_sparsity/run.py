"""Entry points of the svd_sparsity experiments: ``fn(params, reporter) -> summary``.

* ``build_model``        — the build step: train (or load) the tiny ReGLU LM and report its natural sparsity.
* ``predictor_quality``  — E1: rank × whitening → truncation loss, spectra, held-out recall / precision / density.
* ``calibration_quality``— E2: target recall → held-out recall, density, PPL ratio, KL, top-1, task accuracy.
* ``decode_speed``       — E3: batch-1 decode, FFN-only and end to end, with Amdahl's law beside it.
* ``baselines``          — E4: oracle, unwhitened SVD, Deja Vu-style, random, TEAL-like at matched density.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import torch

from compute.core.reporter import Reporter
from compute.core.runtime import seed_everything
from compute.svd_sparsity import speed as SP
from compute.svd_sparsity.baselines import magnitude_threshold, random_selector, teal_transforms, train_dejavu
from compute.svd_sparsity.build import Built, eval_windows, load_or_build
from compute.svd_sparsity.calibrate import (
    LayerData,
    calibrate_thresholds,
    collect_inputs,
    mask_metrics,
    predict_scores,
)
from compute.svd_sparsity.config import (
    MODELS,
    BaselineConfig,
    BuildModelConfig,
    CalibrationConfig,
    PredictorConfig,
    SpeedConfig,
)
from compute.svd_sparsity.executor import GatherFFN, MaskedFFN, ffn_macs
from compute.svd_sparsity.pipeline import LayerPredictor, fit_layer, masked_modules
from compute.svd_sparsity.predictor import factorize, predictor_macs
from compute.svd_sparsity.quality import arithmetic_accuracy, compare_methods


def _load(model: str, reporter: Reporter) -> Built:
    cfg = MODELS[model]
    built = load_or_build(cfg, reporter.data_dir, reporter)
    return built


def _layer_data(built: Built, split: str, n_tokens: int) -> list[LayerData]:
    return collect_inputs(built.model, built.streams[split], n_tokens, built.cfg.context)


# ------------------------------------------------------------------------------------------------
# Build step
# ------------------------------------------------------------------------------------------------
def build_model(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    cfg = BuildModelConfig.from_params(params)
    seed_everything(cfg.seed)
    built = _load(cfg.model, reporter)
    meta = built.meta
    if built.cached:  # show the build's training curves again
        for h in meta.get("history", []):
            reporter.scalars(h["step"], {k: v for k, v in h.items() if k != "step"})
    sp = meta["natural_sparsity"]
    reporter.table(
        "natural_sparsity",
        [{"layer": i, "natural_sparsity": s, "active_fraction": 1 - s} for i, s in enumerate(sp)],
    )
    reporter.series("sparsity/natural", list(range(len(sp))), sp)
    reporter.progress(1.0, "model ready")
    return {
        "cached": built.cached,
        "heldout_ppl": meta["heldout_ppl"],
        "natural_sparsity_mean": float(np.mean(sp)),
        "natural_sparsity_min": float(np.min(sp)),
        "n_params": meta["n_params"],
        "vocab_size": meta["vocab_size"],
        "build_seconds": meta["seconds"],
        "path": built.path.name,
    }


# ------------------------------------------------------------------------------------------------
# E1: predictor quality
# ------------------------------------------------------------------------------------------------
def _gram_loss(W: torch.Tensor, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor) -> float:
    """‖(W − AB)Xᵀ‖_F = √tr(E C Eᵀ) with C = XᵀX (float64)."""
    E = W.double() - A.double() @ B.double()
    return math.sqrt(max(0.0, float(((E @ C) * E).sum())))


def predictor_quality(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    cfg = PredictorConfig.from_params(params)
    seed_everything(cfg.seed)
    built = _load(cfg.model, reporter)
    reporter.progress(0.02, "collecting calibration and held-out FFN inputs")
    cal = _layer_data(built, "cal", cfg.n_cal)
    ho = _layer_data(built, "heldout", cfg.n_heldout)
    d, d_ff = built.model.cfg.d_model, built.model.cfg.d_ff
    ranks = sorted({min(r, d) for r in cfg.ranks})
    rows, auto_rows = [], []
    n_layers = len(cal)
    for li in range(n_layers):
        g_cal, g_ho = cal[li].gate(), ho[li].gate()
        C = cal[li].X.double().T @ cal[li].X.double()
        natural = float((g_ho > 0).float().mean())
        for whiten in (True, False):
            tag = "white" if whiten else "raw"
            F = factorize(cal[li].W_g, cal[li].X, whiten=whiten, eps_rel=cfg.eps_rel)
            s = F.sigma / F.sigma[0]
            reporter.series(f"spectrum/L{li}_{tag}", list(range(1, len(s) + 1)), s.tolist())
            for r in ranks:
                A, B = F.truncate(r)
                gh = predict_scores(cal[li].X, A, B)
                tau = calibrate_thresholds(gh, g_cal, cfg.target_recall)
                mc = mask_metrics(gh > tau, g_cal)
                mh = mask_metrics(predict_scores(ho[li].X, A, B) > tau, g_ho)
                loss = _gram_loss(cal[li].W_g, A, B, C)
                row = {
                    "layer": li,
                    "whitened": whiten,
                    "rank": r,
                    "cal_recall": mc["recall"],
                    "heldout_recall": mh["recall"],
                    "heldout_precision": mh["precision"],
                    "heldout_density": mh["density"],
                    "natural_density": natural,
                    "trunc_loss": loss,
                    "trunc_predicted": F.tail_energy(r) if whiten else float("nan"),
                }
                rows.append(row)
                reporter.scalars(
                    r,
                    {
                        f"recall/L{li}_{tag}": mh["recall"],
                        f"precision/L{li}_{tag}": mh["precision"],
                        f"density/L{li}_{tag}": mh["density"],
                        f"trunc/L{li}_{tag}_measured": loss,
                    },
                )
                if whiten:
                    reporter.scalar(f"trunc/L{li}_white_sqrt_tail", r, F.tail_energy(r))
            reporter.progress((li + 0.5 * (1 + (not whiten))) / n_layers, f"layer {li}: {tag} SVD done")
            if reporter.should_stop():
                return {"stopped": True}
        pred = fit_layer(cal[li], cfg.target_recall, 0, True, density_budget=cfg.density_budget, g_cal=g_cal)
        mh = mask_metrics(pred.scores(ho[li].X) > pred.tau, g_ho)
        auto_rows.append({"layer": li, "auto_rank": pred.rank, **{f"heldout_{k}": v for k, v in mh.items()}})
    for r in ranks:
        reporter.scalar("cost/predictor_share", r, predictor_macs(r, d, d_ff) / ffn_macs(d, d_ff))
    reporter.table("predictor", rows)
    reporter.table("auto_rank", auto_rows)
    # whitening matters: at each (layer, rank), whitened vs raw held-out recall and density, truncation loss
    better = []
    scale = [max(x["trunc_loss"] for x in rows if x["layer"] == li) for li in range(n_layers)]
    for li in range(n_layers):
        for r in ranks:
            w = next(x for x in rows if x["layer"] == li and x["rank"] == r and x["whitened"])
            u = next(x for x in rows if x["layer"] == li and x["rank"] == r and not x["whitened"])
            better.append(
                {
                    "layer": li,
                    "rank": r,
                    "density_white": w["heldout_density"],
                    "density_raw": u["heldout_density"],
                    "recall_white": w["heldout_recall"],
                    "recall_raw": u["heldout_recall"],
                    # equal up to round-off at full rank: tolerance 1e-6 of the loss at the smallest rank
                    "loss_white_le_raw": w["trunc_loss"] <= u["trunc_loss"] + 1e-6 * scale[li],
                }
            )
    reporter.table("whitening", better)
    return {
        "natural_sparsity_mean": float(np.mean([x["heldout_natural_sparsity"] for x in auto_rows])),
        "auto_ranks": [x["auto_rank"] for x in auto_rows],
        "auto_heldout_recall_mean": float(np.mean([x["heldout_recall"] for x in auto_rows])),
        "auto_heldout_density_mean": float(np.mean([x["heldout_density"] for x in auto_rows])),
        "white_loss_never_larger": all(b["loss_white_le_raw"] for b in better),
        "white_lower_density_fraction": float(np.mean([b["density_white"] <= b["density_raw"] for b in better])),
    }


# ------------------------------------------------------------------------------------------------
# E2: calibration and quality
# ------------------------------------------------------------------------------------------------
def _fit_all(
    cal: list[LayerData], rho: float, rank: int, budget: float, granularity: str = "layer", weighted: bool = False
) -> list[LayerPredictor]:
    return [fit_layer(ld, rho, rank, True, granularity, weighted, budget) for ld in cal]


def _heldout_metrics(ho: list[LayerData], preds: list[LayerPredictor]) -> list[dict[str, float]]:
    out = []
    for ld, p in zip(ho, preds, strict=True):
        g = ld.gate()
        out.append(mask_metrics(p.scores(ld.X) > p.tau.to(ld.X.dtype), g))
    return out


def calibration_quality(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    cfg = CalibrationConfig.from_params(params)
    seed_everything(cfg.seed)
    built = _load(cfg.model, reporter)
    model = built.model
    reporter.progress(0.02, "collecting calibration FFN inputs")
    cal = _layer_data(built, "cal", cfg.n_cal)
    ho = _layer_data(built, "heldout", cfg.n_eval)
    eval_tok = eval_windows(built.streams["heldout"], cfg.n_eval, built.cfg.context + 1)
    methods: dict[str, list[MaskedFFN]] = {"oracle": [MaskedFFN(b.ffn, lambda x, g: g > 0) for b in model.blocks]}
    fits: dict[float, list[LayerPredictor]] = {}
    rows_layer = []
    for i, rho in enumerate(cfg.target_recalls):
        preds = _fit_all(cal, rho, cfg.rank, cfg.density_budget, cfg.granularity, cfg.recall_type == "weighted")
        fits[rho] = preds
        methods[f"svd@{rho:g}"] = masked_modules(model, preds)
        for li, (p, m) in enumerate(zip(preds, _heldout_metrics(ho, preds), strict=True)):
            rows_layer.append(
                {
                    "target_recall": rho,
                    "layer": li,
                    "rank": p.rank,
                    "cal_recall": p.cal["recall"],
                    "heldout_recall": m["recall"],
                    "heldout_precision": m["precision"],
                    "density": m["density"],
                    "natural_density": 1 - m["natural_sparsity"],
                    "density_over_natural": m["density"] / max(1e-9, 1 - m["natural_sparsity"]),
                }
            )
        reporter.progress(0.05 + 0.35 * (i + 1) / len(cfg.target_recalls), f"calibrated ρ={rho:g}")
        if reporter.should_stop():
            return {"stopped": True}
    reporter.table("per_layer", rows_layer)
    reporter.progress(0.45, f"PPL / KL / top-1 on {eval_tok.numel():,} held-out tokens")
    res = compare_methods(model, eval_tok, methods)
    acc_dense = acc = None
    accs: dict[str, float] = {}
    if cfg.n_task:
        acc_dense = arithmetic_accuracy(model, built.tokenizer, cfg.n_task, cfg.seed, built.cfg.max_digits)
        from compute.svd_sparsity.quality import swap_ffn

        for name, mods in methods.items():
            if name == "oracle":
                continue
            with swap_ffn(model, mods):
                accs[name] = arithmetic_accuracy(model, built.tokenizer, cfg.n_task, cfg.seed, built.cfg.max_digits)
    rows = []
    for rho in cfg.target_recalls:
        name = f"svd@{rho:g}"
        r = res[name]
        lr = [x for x in rows_layer if x["target_recall"] == rho]
        row = {
            "method": name,
            "target_recall": rho,
            "heldout_recall": float(np.mean([x["heldout_recall"] for x in lr])),
            "heldout_recall_min": float(np.min([x["heldout_recall"] for x in lr])),
            "density": float(np.mean([x["density"] for x in lr])),
            "natural_density": float(np.mean([x["natural_density"] for x in lr])),
            "ppl_dense": res["dense"]["ppl"],
            "ppl_ratio": r["ppl_ratio"],
            "kl": r["kl"],
            "top1": r["top1"],
        }
        row["density_over_natural"] = row["density"] / max(1e-9, row["natural_density"])
        if cfg.n_task:
            row["task_acc_dense"], row["task_acc"] = acc_dense, accs[name]
        rows.append(row)
        reporter.scalars(
            rho,
            {
                "heldout/recall": row["heldout_recall"],
                "heldout/target": rho,
                "quality/ppl_ratio": r["ppl_ratio"],
                "quality/top1": r["top1"],
            },
        )
        reporter.scalars(row["density"], {"pareto/svd_ppl_ratio": r["ppl_ratio"], "pareto/svd_kl": r["kl"]})
    reporter.table("quality", rows)
    reporter.table(
        "oracle_check", [{"method": "oracle", "ppl_ratio": res["oracle"]["ppl_ratio"], "kl": res["oracle"]["kl"]}]
    )
    head = min(cfg.target_recalls, key=lambda x: abs(x - 0.99))
    h = next(x for x in rows if x["target_recall"] == head)
    acc = h.get("task_acc")
    return {
        "target_recall": head,
        "heldout_recall": h["heldout_recall"],
        "heldout_recall_min": h["heldout_recall_min"],
        "density": h["density"],
        "natural_sparsity": 1 - h["natural_density"],
        "density_over_natural": h["density_over_natural"],
        "ppl_dense": res["dense"]["ppl"],
        "ppl_ratio": h["ppl_ratio"],
        "top1": h["top1"],
        "kl": h["kl"],
        "oracle_ppl_ratio": res["oracle"]["ppl_ratio"],
        "task_acc_dense": acc_dense,
        "task_acc_sparse": acc,
        "ranks": [p.rank for p in fits[head]],
    }


# ------------------------------------------------------------------------------------------------
# E3: decode speed
# ------------------------------------------------------------------------------------------------
def decode_speed(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    cfg = SpeedConfig.from_params(params)
    seed_everything(cfg.seed)
    torch.set_num_threads(cfg.threads)
    summary: dict[str, Any] = {"threads": cfg.threads}
    if cfg.mode in ("scaled", "both"):
        rows = []
        model = SP.synthetic_model(cfg.d, cfg.d_ff, cfg.n_layers, cfg.vocab, cfg.n_tokens + 16, cfg.seed)
        prompt = list(range(3, 11))
        for i, p in enumerate(sorted(cfg.densities)):
            reporter.progress(0.05 + 0.5 * i / len(cfg.densities), f"scaled FFN benchmark at density {p:g}")
            f = SP.ffn_benchmark(cfg.d, cfg.d_ff, cfg.n_layers, p, cfg.rank, cfg.n_tokens, cfg.trials, 4, cfg.seed)
            e = SP.e2e_decode(
                model,
                prompt,
                cfg.n_tokens,
                cfg.trials,
                lambda mode, p=p: SP.synthetic_gather_modules(model, mode, p, cfg.rank, cfg.n_tokens + 1, cfg.seed),
            )
            share = e["dense"]["ffn_share"]
            t_ffn = {m: e[m]["ffn_share"] / e[m]["tokens_per_s"] for m in ("dense", "svd")}
            situ = t_ffn["dense"] / t_ffn["svd"]  # FFN speed-up inside the decode loop (hook timers)
            row = {
                "density": p,
                "ffn_speedup_svd": f["speedup_svd"],
                "ffn_speedup_oracle": f["speedup_oracle"],
                "ffn_speedup_gate_first": f["speedup_gate_first"],
                "e2e_speedup_svd": e["svd"]["tokens_per_s"] / e["dense"]["tokens_per_s"],
                "e2e_speedup_oracle": e["oracle"]["tokens_per_s"] / e["dense"]["tokens_per_s"],
                "e2e_speedup_gate_first": e["gate_first"]["tokens_per_s"] / e["dense"]["tokens_per_s"],
                "amdahl_svd": SP.amdahl(share, f["speedup_svd"]),
                "ffn_speedup_svd_in_situ": situ,
                "amdahl_svd_in_situ": SP.amdahl(share, situ),
                "dense_ffn_share": share,
                "tokens_per_s_dense": e["dense"]["tokens_per_s"],
                "tokens_per_s_svd": e["svd"]["tokens_per_s"],
                "predictor_ms": 1e3 * f["predictor_s"],
                "gather_ms": 1e3 * f["gather_s"],
                "gemv_ms": 1e3 * f["gemv_s"],
                "dense_ffn_ms": 1e3 * f["dense_s"],
                "svd_density": f["svd_density"],
            }
            rows.append(row)
            reporter.scalars(
                p,
                {
                    "scaled/ffn_speedup_svd": row["ffn_speedup_svd"],
                    "scaled/ffn_speedup_oracle": row["ffn_speedup_oracle"],
                    "scaled/ffn_speedup_gate_first": row["ffn_speedup_gate_first"],
                    "scaled/e2e_speedup_svd": row["e2e_speedup_svd"],
                    "scaled/amdahl_svd": row["amdahl_svd"],
                },
            )
            if reporter.should_stop():
                break
        reporter.table("scaled", rows)
        reporter.table(
            "breakdown",
            [
                {
                    "density": r["density"],
                    "dense FFN (ms/token)": r["dense_ffn_ms"],
                    "predictor (ms/token)": r["predictor_ms"],
                    "gather copies (ms/token)": r["gather_ms"],
                    "GEMV on gathered rows (ms/token)": r["gemv_ms"],
                }
                for r in rows
            ],
        )
        best = min(rows, key=lambda r: r["density"])
        summary.update(
            {
                "scaled_density": best["density"],
                "scaled_ffn_speedup_svd": best["ffn_speedup_svd"],
                "scaled_e2e_speedup_svd": best["e2e_speedup_svd"],
                "scaled_amdahl_svd": best["amdahl_svd"],
            }
        )
        del model
    if cfg.mode in ("trained", "both"):
        reporter.progress(0.6, "trained model: calibrating the predictor")
        built = _load(cfg.model, reporter)
        model = built.model
        cal = _layer_data(built, "cal", cfg.n_cal)
        preds = _fit_all(cal, cfg.target_recall, 0, 1.5)
        ho = built.streams["heldout"]
        prompt = ho[:16].tolist()
        n_new = min(cfg.n_tokens * 4, built.cfg.context - len(prompt) - 2)
        record: list[list[torch.Tensor]] = [[] for _ in model.blocks]

        class _Rec(GatherFFN):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                if x.shape[0] == 1 and x.shape[1] == 1:
                    record[self.layer].append(torch.nonzero(self.W_g @ x.view(-1) > 0).squeeze(1))
                return super().forward(x)

        recs = []
        for li, blk in enumerate(model.blocks):
            m = _Rec(blk.ffn, "dense")
            m.layer = li
            recs.append(m)
        from compute.svd_sparsity.quality import swap_ffn

        with swap_ffn(model, recs):
            SP.decode_tokens(model, prompt, n_new)

        def make(mode: str) -> list[GatherFFN]:
            mods = []
            for li, (blk, p) in enumerate(zip(model.blocks, preds, strict=True)):
                mods.append(GatherFFN(blk.ffn, mode, p.A, p.B, p.tau.float(), record[li]))
            return mods

        reporter.progress(0.75, f"trained model: decoding {n_new} tokens per trial")
        e = SP.e2e_decode(model, prompt, n_new, cfg.trials, make)
        ffn_t = {m: e[m]["ffn_share"] / e[m]["tokens_per_s"] for m in e}
        ffn_speed = ffn_t["dense"] / ffn_t["svd"]
        trows = [
            {
                "mode": m,
                "tokens_per_s": e[m]["tokens_per_s"],
                "e2e_speedup": e[m]["tokens_per_s"] / e["dense"]["tokens_per_s"],
                "ffn_speedup": ffn_t["dense"] / ffn_t[m],
                "attention_share": e[m]["attention_share"],
                "ffn_share": e[m]["ffn_share"],
                "other_share": e[m]["other_share"],
                "density": e[m].get("density", 1.0) if m in ("svd", "oracle") else 1.0,
            }
            for m in e
        ]
        reporter.table("trained", trows)
        for r in trows:
            reporter.scalar(f"trained/tokens_per_s_{r['mode']}", 0, r["tokens_per_s"])
        summary.update(
            {
                "trained_e2e_speedup_svd": e["svd"]["tokens_per_s"] / e["dense"]["tokens_per_s"],
                "trained_ffn_speedup_svd": ffn_speed,
                "trained_amdahl_svd": SP.amdahl(e["dense"]["ffn_share"], ffn_speed),
                "trained_dense_ffn_share": e["dense"]["ffn_share"],
                "trained_svd_density": e["svd"]["density"],
            }
        )
    reporter.progress(1.0, "done")
    return summary


# ------------------------------------------------------------------------------------------------
# E4: baselines at matched density
# ------------------------------------------------------------------------------------------------
def baselines(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    cfg = BaselineConfig.from_params(params)
    seed_everything(cfg.seed)
    built = _load(cfg.model, reporter)
    model = built.model
    d, d_ff = model.cfg.d_model, model.cfg.d_ff
    reporter.progress(0.02, "collecting calibration FFN inputs")
    cal = _layer_data(built, "cal", cfg.n_cal)
    eval_tok = eval_windows(built.streams["heldout"], cfg.n_eval, built.cfg.context + 1)
    gen = torch.Generator().manual_seed(cfg.seed)
    rows = []
    t_start = time.perf_counter()
    for ri, rho in enumerate(cfg.target_recalls):
        methods: dict[str, list[MaskedFFN]] = {}
        cost: dict[str, float] = {}
        methods["oracle"] = [MaskedFFN(b.ffn, lambda x, g: g > 0) for b in model.blocks]
        white = _fit_all(cal, rho, cfg.rank, cfg.density_budget)
        methods["svd_whitened"] = masked_modules(model, white)
        ranks = [p.rank for p in white]
        raw, dv_mods, rnd, teal = [], [], [], []
        for li, (ld, p) in enumerate(zip(cal, white, strict=True)):
            g = ld.gate()
            raw.append(fit_layer(ld, rho, p.rank, whiten=False, g_cal=g))
            net = train_dejavu(ld.X, g > 0, p.rank, cfg.dejavu_steps, seed=cfg.seed + li)
            with torch.no_grad():
                logits = torch.cat([net(ld.X[i : i + 8192]) for i in range(0, len(ld.X), 8192)])
            tau = calibrate_thresholds(logits, g, rho)
            dv_mods.append(MaskedFFN(model.blocks[li].ffn, lambda x, g_, net=net, tau=tau: net(x) > tau))
            dens = p.cal["density"]
            rnd.append(MaskedFFN(model.blocks[li].ffn, random_selector(dens, gen)))
            h = torch.relu(g) * (ld.X @ ld.W_u.T)
            tx, th = teal_transforms(magnitude_threshold(ld.X, dens), magnitude_threshold(h, dens))
            teal.append(MaskedFFN(model.blocks[li].ffn, None, tx, th))
            teal[-1].dens = dens
            reporter.progress(0.05 + 0.4 * (ri + (li + 1) / len(cal)) / len(cfg.target_recalls), f"baselines L{li}")
        methods["svd_unwhitened"] = masked_modules(model, raw)
        methods["dejavu_trained"] = dv_mods
        methods["random"] = rnd
        methods["teal_like"] = teal
        res = compare_methods(model, eval_tok, methods)
        for name, r in res.items():
            if name == "dense":
                continue
            if name == "teal_like":
                dens_l = [m.dens for m in teal]
                recall_l = [float("nan")]
            else:
                dens_l, recall_l = r["density"], r["recall"]
            density = float(np.mean(dens_l))
            k = density * d_ff
            rank_cost = float(np.mean(ranks)) if name in ("svd_whitened", "svd_unwhitened", "dejavu_trained") else 0
            if name == "oracle":
                cost[name] = ffn_macs(d, d_ff) / ffn_macs(d, d_ff, k)
            else:
                cost[name] = ffn_macs(d, d_ff) / (3 * d * k + rank_cost * (d + d_ff))
            row = {
                "target_recall": rho,
                "method": name,
                "density": density,
                "recall": float(np.mean(recall_l)),
                "ppl_ratio": r["ppl_ratio"],
                "kl": r["kl"],
                "top1": r["top1"],
                "mac_speedup": cost[name],
            }
            rows.append(row)
            reporter.scalars(density, {f"pareto/{name}_ppl_ratio": r["ppl_ratio"]})
        reporter.progress(0.5 + 0.5 * (ri + 1) / len(cfg.target_recalls), f"ρ={rho:g} evaluated")
        if reporter.should_stop():
            break
    reporter.table("baselines", rows)
    head = min(cfg.target_recalls, key=lambda x: abs(x - 0.99))
    out: dict[str, Any] = {"target_recall": head, "seconds": time.perf_counter() - t_start}
    for r in rows:
        if r["target_recall"] == head:
            out[f"{r['method']}_ppl_ratio"] = r["ppl_ratio"]
            out[f"{r['method']}_density"] = r["density"]
    return out

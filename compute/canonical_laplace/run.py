"""Experiment entry points: ``invariance``, ``landscape`` and ``heldout`` (paper §4 claims).

Each takes (params, reporter) and returns a JSON-able summary.  One MAP network is trained per run;
representatives are rescalings θ_r = S_r θ of it (never retrained), and every quantity — f, J, G, the
evidence, λ*, the predictive — is recomputed from scratch at θ_r by autodiff, so invariance is measured,
not built in.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import torch
from torch import Tensor

from compute.core.reporter import Reporter
from compute.core.runtime import seed_everything

from .canonical import canonical_d, canonicalize
from .config import BaseConfig, HeldoutConfig, InvarianceConfig, LandscapeConfig
from .curvature import Curvature, ggn_factor, hessian_nll, jacobian, log_likelihood
from .data import DataBundle, make_data
from .evidence import (
    LaplaceFit,
    fit_standard_layerwise,
    fit_standard_scalar,
    fit_whitened,
    log_evidence_grid,
    probit_probs,
)
from .model import DTYPE, MLP, init_params, neuron_to_param_scale, parse_widths, random_neuron_scales, train_map

METHOD_LABELS = {
    "standard_scalar": "standard EB, scalar λ",
    "standard_layerwise": "standard EB, layer-wise λ_l",
    "canonical": "γ-canonical",
}


# ------------------------------------------------------------------------------------------------
# shared pieces
# ------------------------------------------------------------------------------------------------
@dataclass
class Trained:
    cfg: BaseConfig
    data: DataBundle
    mlp: MLP
    theta: Tensor
    gen: torch.Generator
    train_seconds: float


@dataclass
class Rep:
    """Everything recomputed at one representative θ_r."""

    theta: Tensor
    f: Tensor
    loglik: float
    curv: Curvature


def prepare(cfg: BaseConfig, reporter: Reporter, frac: float = 0.4) -> Trained:
    """Seed, generate the data, train the MAP network (streams ``train/loss``)."""
    seed_everything(cfg.seed)
    n_test = getattr(cfg, "n_test", 200)
    data = make_data(cfg.dataset, cfg.n_train, cfg.noise, cfg.seed, gap=cfg.gap, n_test=n_test, device=cfg.device)
    mlp = parse_widths(data.d_in, cfg.hidden, data.d_out)
    gen = torch.Generator().manual_seed(cfg.seed)
    theta0 = init_params(mlp, gen, cfg.device)
    reporter.log(
        f"{cfg.dataset}: N={cfg.n_train}, net {'-'.join(map(str, mlp.widths))}, P={mlp.n_params}, "
        f"{cfg.curvature.upper()} curvature, canonicalizer family {cfg.family}"
    )
    xs: list[float] = []
    ys: list[float] = []

    def cb(step: int, loss: float) -> bool:
        xs.append(step)
        ys.append(loss)
        if len(xs) % 4 == 0:
            reporter.series("train/loss", xs[-4:], ys[-4:])
        reporter.progress(frac * (step + 1) / cfg.train_steps, f"MAP training {step + 1}/{cfg.train_steps}")
        return reporter.should_stop()

    t0 = time.perf_counter()
    theta = train_map(
        mlp, theta0, data.train.x, data.train.y, data.likelihood, cfg.train_steps, cfg.lr, cfg.weight_decay, callback=cb
    )
    if len(xs) % 4:
        reporter.series("train/loss", xs[-(len(xs) % 4) :], ys[-(len(xs) % 4) :])
    return Trained(cfg, data, mlp, theta, gen, time.perf_counter() - t0)


def representatives(tr: Trained, n: int, log10_range: float) -> list[Tensor]:
    """[θ, S_1θ, …, S_nθ] with random positive neuron scales s = 10^U(±log10_range)."""
    reps = [tr.theta]
    for _ in range(n):
        s = random_neuron_scales(tr.mlp, log10_range, tr.gen, tr.cfg.device)
        reps.append(neuron_to_param_scale(tr.mlp, s) * tr.theta)
    return reps


def at(tr: Trained, theta: Tensor) -> Rep:
    """Recompute f, log-likelihood and curvature (GGN factor or Hessian) at θ."""
    cfg, d = tr.cfg, tr.data
    f = tr.mlp.forward(theta, d.train.x)
    ll = float(log_likelihood(f, d.train.y, d.likelihood, cfg.sigma))
    if cfg.curvature == "hessian":
        curv = Curvature(dense=hessian_nll(tr.mlp, theta, d.train.x, d.train.y, d.likelihood, cfg.sigma))
    else:
        curv = Curvature(factor=ggn_factor(jacobian(tr.mlp, theta, d.train.x), f, d.likelihood, cfg.sigma))
    return Rep(theta, f, ll, curv)


def fit_canonical(tr: Trained, rep: Rep, gamma: float) -> LaplaceFit:
    """γ-canonical EB: P₀(θ) = λD_γ(θ)², λ* by evidence on the spectrum of D⁻¹GD⁻¹."""
    d = canonical_d(tr.mlp, rep.theta, tr.cfg.family, gamma)
    fit = fit_whitened("canonical", rep.curv, rep.theta, rep.loglik, d, gamma=gamma, family=tr.cfg.family)
    return fit


def select_gamma(tr: Trained, rep: Rep, n_grid: int = 11, n_fine: int = 11) -> tuple[LaplaceFit, list[LaplaceFit]]:
    """Joint (γ, λ) by marginal likelihood; returns (fit at γ*, fits on the coarse γ grid).

    λ*(γ) is exact for every γ (``select_lambda``).  γ: coarse grid {0, 0.1, …, 1} → fine grid of ``n_fine``
    points between the argmax's neighbours → parabola through the best fine point and its neighbours.
    Design choice: a fixed grid plus an interpolation is a smooth function of the (orbit-invariant) log Z
    values, so γ* is reproduced on every representative to round-off; an iterative optimiser stopping at a
    tolerance would resolve the flat maximum only to ~√ε and break the ≤ 1e-8 invariance of λ*.
    """
    if tr.cfg.family != "A":
        fit = fit_canonical(tr, rep, 0.5)
        return fit, [fit]
    grid = np.linspace(0, 1, n_grid)
    coarse = [fit_canonical(tr, rep, float(g)) for g in grid]
    i = int(np.argmax([f.log_z for f in coarse]))
    fine = np.linspace(grid[max(i - 1, 0)], grid[min(i + 1, n_grid - 1)], n_fine)
    zs = np.array([fit_canonical(tr, rep, float(g)).log_z for g in fine])
    j = int(np.argmax(zs))
    g_star = float(fine[j])
    if 0 < j < n_fine - 1:
        h = fine[1] - fine[0]
        denom = zs[j - 1] - 2 * zs[j] + zs[j + 1]
        if denom < 0:
            g_star = float(fine[j] + 0.5 * h * (zs[j - 1] - zs[j + 1]) / denom)
    best = fit_canonical(tr, rep, float(np.clip(g_star, 0.0, 1.0)))
    return best, coarse


def probe_inputs(tr: Trained, n: int = 121) -> tuple[np.ndarray, Tensor]:
    """Inputs x0 + u·direction along the data set's probe line; returns (u, x (n, d))."""
    x0, direction = tr.data.probe_line
    u = np.linspace(*tr.data.probe_range, n)
    x = x0[None, :] + u[:, None] * direction[None, :]
    return u, torch.as_tensor(x, dtype=DTYPE, device=tr.cfg.device)


def band(tr: Trained, fit: LaplaceFit, f: Tensor, jac: Tensor) -> tuple[Tensor, Tensor]:
    """Predictive mean and sd along the probe line from f (T, K) and J (T, K, P) at the representative.

    Regression: y* ~ N(f, J*ΣJ*ᵀ + σ²).  Classification: latent logit difference f₁ − f₀ and its sd.
    """
    cov = fit.latent_cov(jac)
    if tr.data.likelihood == "regression":
        return f[:, 0], (cov[:, 0, 0] + tr.cfg.sigma**2).sqrt()
    var = cov[:, 1, 1] + cov[:, 0, 0] - 2 * cov[:, 0, 1]
    return f[:, 1] - f[:, 0], var.clamp_min(0).sqrt()


def _rel_dev(vals: list[float]) -> float:
    """max_r |v_r − v_0| / |v_0|."""
    v0 = vals[0]
    return float(max(abs(v - v0) for v in vals) / max(abs(v0), 1e-300))


def _rel_dev_arr(arrs: list[Tensor]) -> float:
    a0 = arrs[0]
    return float(max(((a - a0).abs() / a0.abs().clamp_min(1e-300)).max() for a in arrs))


# ------------------------------------------------------------------------------------------------
# Experiment 1: invariance
# ------------------------------------------------------------------------------------------------
def invariance(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Standard EB (scalar, layer-wise) vs γ-canonical EB on R function-preserving rescalings of one MAP."""
    cfg = InvarianceConfig.from_params(params)
    tr = prepare(cfg, reporter)
    reps = representatives(tr, cfg.n_rescalings, cfg.log10_scale_range)
    u, xp = probe_inputs(tr)
    i_probe = int(np.argmin(np.abs(u - tr.data.probe_point)))
    gammas = np.linspace(0, 1, cfg.n_gamma) if cfg.family == "A" else np.array([0.5])
    methods = ["standard_scalar"] + (["standard_layerwise"] if cfg.layerwise else []) + ["canonical"]
    logz: dict[str, list[float]] = {m: [] for m in methods}
    lam: dict[str, list[float]] = {m: [] for m in methods}
    sd_probe: dict[str, list[float]] = {m: [] for m in methods}  # at the probe point (x = 10 for the sinusoid)
    sd_left: dict[str, list[float]] = {m: [] for m in methods}  # at the left end of the probe line (x = −2)
    var_band: dict[str, list[Tensor]] = {m: [] for m in methods}
    bands: dict[str, list[tuple[Tensor, Tensor]]] = {m: [] for m in methods}
    per_gamma: dict[float, dict[str, list]] = {float(g): {"logz": [], "lam": [], "var": []} for g in gammas}
    c_dev, f_dev, gamma_star = [], [], []
    c_ref = canonicalize(tr.mlp, reps[0], cfg.family, cfg.gamma)
    f_ref = tr.mlp.forward(reps[0], tr.data.train.x)
    x_probe = xp[i_probe : i_probe + 1]
    rows = []
    for r, theta in enumerate(reps):
        if reporter.should_stop():
            break
        reporter.progress(0.4 + 0.55 * r / len(reps), f"representative {r + 1}/{len(reps)}")
        rep = at(tr, theta)
        f_dev.append(float((rep.f - f_ref).abs().max()))
        c_dev.append(float((canonicalize(tr.mlp, theta, cfg.family, cfg.gamma) - c_ref).abs().max()))
        fits: dict[str, LaplaceFit] = {"standard_scalar": fit_standard_scalar(rep.curv, theta, rep.loglik)}
        if cfg.layerwise:
            fits["standard_layerwise"] = fit_standard_layerwise(
                rep.curv, theta, rep.loglik, tr.mlp.groups(), fits["standard_scalar"].lam
            )
        best, coarse = select_gamma(tr, rep, cfg.n_gamma)
        fits["canonical"] = best if cfg.select_gamma else fit_canonical(tr, rep, cfg.gamma)
        gamma_star.append(float(fits["canonical"].extra["gamma"]))
        jp = jacobian(tr.mlp, theta, x_probe)
        f_band, j_band = tr.mlp.forward(theta, xp), jacobian(tr.mlp, theta, xp)
        for m, fit in fits.items():
            logz[m].append(fit.log_z)
            lam[m].append(fit.lam if m != "standard_layerwise" else math.exp(np.mean(np.log(fit.extra["lambdas"]))))
            mean, sd = band(tr, fit, f_band, j_band)
            bands[m].append((mean, sd))
            var_band[m].append(sd**2)
            sd_probe[m].append(float(sd[i_probe]))
            sd_left[m].append(float(sd[0]))
        # the every-γ sweep: λ*(γ), log Z, predictive variance at the probe point
        for g, fg in zip(gammas, coarse, strict=False):
            per_gamma[float(g)]["logz"].append(fg.log_z)
            per_gamma[float(g)]["lam"].append(fg.lam)
            per_gamma[float(g)]["var"].append(float(fg.latent_cov(jp)[0, 0, 0]))
        del jp
        point = {f"logz/{m}": logz[m][-1] for m in methods}
        point.update({f"lambda/{m}": lam[m][-1] for m in methods})
        point.update({f"sd/{m}": sd_probe[m][-1] for m in methods})
        point.update({f"sd_left/{m}": sd_left[m][-1] for m in methods})
        point.update({"orbit/c_dev": c_dev[-1], "orbit/f_dev": f_dev[-1]})
        if cfg.layerwise:
            for li, v in enumerate(fits["standard_layerwise"].extra["lambdas"]):
                point[f"lambda_layer/L{li + 1}"] = v
        reporter.scalars(r, point)
        rows.append(
            {
                "rep": r,
                **{f"logZ {m}": round(logz[m][-1], 6) for m in methods},
                **{f"λ* {m}": lam[m][-1] for m in methods},
                **{f"sd@probe {m}": sd_probe[m][-1] for m in methods},
                "γ*": gamma_star[-1],
            }
        )
        reporter.table("representatives", rows)

    dev_rows = []
    for m in methods:
        dev_rows.append(
            {
                "method": METHOD_LABELS[m],
                "logZ min": min(logz[m]),
                "logZ max": max(logz[m]),
                "logZ spread": max(logz[m]) - min(logz[m]),
                "logZ max rel dev": _rel_dev(logz[m]),
                "λ* min": min(lam[m]),
                "λ* max": max(lam[m]),
                "λ* max rel dev": _rel_dev(lam[m]),
                "sd@probe min": min(sd_probe[m]),
                "sd@probe max": max(sd_probe[m]),
                "sd@left min": min(sd_left[m]),
                "sd@left max": max(sd_left[m]),
                "max band sd min": min(float(v.max().sqrt()) for v in var_band[m]),
                "max band sd max": max(float(v.max().sqrt()) for v in var_band[m]),
                "pred var max rel dev (band)": _rel_dev_arr(var_band[m]),
            }
        )
    reporter.table("deviation", dev_rows)
    g_rows = [
        {
            "γ": g,
            "logZ": v["logz"][0],
            "λ*": v["lam"][0],
            "logZ max rel dev": _rel_dev(v["logz"]),
            "λ* max rel dev": _rel_dev(v["lam"]),
            "latent var max rel dev": _rel_dev(v["var"]),
        }
        for g, v in per_gamma.items()
    ]
    reporter.table("per_gamma", g_rows)
    reporter.series("gamma_sweep/logz", list(per_gamma), [v["logz"][0] for v in per_gamma.values()])
    reporter.series(
        "gamma_sweep/max_rel_dev_logz", list(per_gamma), [max(r["logZ max rel dev"], 1e-18) for r in g_rows]
    )
    reporter.series(
        "gamma_sweep/max_rel_dev_var", list(per_gamma), [max(r["latent var max rel dev"], 1e-18) for r in g_rows]
    )
    reporter.figure("bands", _bands_figure(tr, u, bands, methods))
    reporter.figure("strip", _strip_figure(logz, methods))
    reporter.progress(1.0, "done")
    return {
        "P": tr.mlp.n_params,
        "n_representatives": len(logz["canonical"]),
        "standard_logz_min": min(logz["standard_scalar"]),
        "standard_logz_max": max(logz["standard_scalar"]),
        "standard_lambda_min": min(lam["standard_scalar"]),
        "standard_lambda_max": max(lam["standard_scalar"]),
        "standard_sd_probe_min": min(sd_probe["standard_scalar"]),
        "standard_sd_probe_max": max(sd_probe["standard_scalar"]),
        "standard_sd_left_min": min(sd_left["standard_scalar"]),
        "standard_sd_left_max": max(sd_left["standard_scalar"]),
        "canonical_sd_probe": sd_probe["canonical"][0],
        "canonical_sd_left": sd_left["canonical"][0],
        "standard_band_sd_max_min": min(float(v.max().sqrt()) for v in var_band["standard_scalar"]),
        "standard_band_sd_max_max": max(float(v.max().sqrt()) for v in var_band["standard_scalar"]),
        "canonical_logz": logz["canonical"][0],
        "canonical_lambda": lam["canonical"][0],
        "canonical_gamma": gamma_star[0],
        "canonical_logz_max_rel_dev": _rel_dev(logz["canonical"]),
        "canonical_lambda_max_rel_dev": _rel_dev(lam["canonical"]),
        "canonical_var_max_rel_dev": _rel_dev_arr(var_band["canonical"]),
        "canonical_gamma_star_max_abs_dev": float(max(abs(g - gamma_star[0]) for g in gamma_star)),
        "every_gamma_max_rel_dev_logz": max(r["logZ max rel dev"] for r in g_rows),
        "every_gamma_max_rel_dev_var": max(r["latent var max rel dev"] for r in g_rows),
        "c_dev_max": max(c_dev),
        "f_dev_max": max(f_dev),
        "train_seconds": tr.train_seconds,
    }


def _bands_figure(
    tr: Trained, u: np.ndarray, bands: dict[str, list[tuple[Tensor, Tensor]]], methods: list[str]
) -> dict[str, Any]:
    colors = {
        "standard_scalar": "rgba(214,39,40,{a})",
        "standard_layerwise": "rgba(255,127,14,{a})",
        "canonical": "rgba(31,119,180,{a})",
    }
    data: list[dict[str, Any]] = []
    if tr.data.likelihood == "regression" and tr.data.d_in == 1:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "train",
                "x": tr.data.train.x[:, 0].tolist(),
                "y": tr.data.train.y[:, 0].tolist(),
                "marker": {"size": 3, "color": "black"},
            }
        )
    for m in methods:
        for r, (mean, sd) in enumerate(bands[m]):
            for sign in (1, -1):
                data.append(
                    {
                        "type": "scatter",
                        "mode": "lines",
                        "x": u.tolist(),
                        "y": (mean + sign * 2 * sd).tolist(),
                        "name": METHOD_LABELS[m],
                        "legendgroup": m,
                        "showlegend": r == 0 and sign == 1,
                        "line": {"color": colors[m].format(a=0.6), "width": 1},
                    }
                )
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": u.tolist(),
                "y": bands[m][0][0].tolist(),
                "name": "mean",
                "showlegend": m == methods[0],
                "line": {"color": "black", "width": 2},
            }
        )
    ylab = "y ± 2 sd" if tr.data.likelihood == "regression" else "logit difference ± 2 sd"
    return {
        "data": data,
        "layout": {
            "title": "Predictive bands of all representatives",
            "xaxis": {"title": "probe coordinate u"},
            "yaxis": {"title": ylab},
        },
    }


def _strip_figure(logz: dict[str, list[float]], methods: list[str]) -> dict[str, Any]:
    data = [
        {"type": "box", "boxpoints": "all", "jitter": 0.4, "pointpos": 0, "name": METHOD_LABELS[m], "y": logz[m]}
        for m in methods
    ]
    return {"data": data, "layout": {"title": "log evidence per representative", "yaxis": {"title": "log Z"}}}


# ------------------------------------------------------------------------------------------------
# Experiment 2: (γ, λ) landscape
# ------------------------------------------------------------------------------------------------
def landscape(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """log Z(γ, λ) on a γ × log λ grid at three representatives, argmax marked; standard log Z(λ) beside it."""
    cfg = LandscapeConfig.from_params(params)
    tr = prepare(cfg, reporter, frac=0.6)
    reps = representatives(tr, 2, cfg.log10_scale_range)
    gammas = np.linspace(0, 1, cfg.n_gamma) if cfg.family == "A" else np.array([0.5])
    lams = torch.logspace(-4, 4, cfg.n_lambda, dtype=DTYPE, device=cfg.device)
    grids, rows = [], []
    for r, theta in enumerate(reps):
        reporter.progress(0.6 + 0.35 * r / 3, f"landscape at representative {r + 1}/3")
        rep = at(tr, theta)
        z = []
        for g in gammas:
            d = canonical_d(tr.mlp, theta, cfg.family, float(g))
            eig = rep.curv.whiten(d).eigvals()
            z.append(log_evidence_grid(rep.loglik, eig, float(((d * theta) ** 2).sum()), lams))
        zt = torch.stack(z)  # (n_gamma, n_lambda)
        grids.append(zt)
        gi, li = np.unravel_index(int(torch.argmax(zt)), zt.shape)
        best, _ = select_gamma(tr, rep, cfg.n_gamma)
        std = fit_standard_scalar(rep.curv, theta, rep.loglik)
        z_std = log_evidence_grid(rep.loglik, rep.curv.eigvals(), float((theta**2).sum()), lams)
        reporter.series(f"standard/rep{r}", torch.log10(lams).tolist(), z_std.tolist())
        rows.append(
            {
                "rep": r,
                "grid γ*": float(gammas[gi]),
                "grid λ*": float(lams[li]),
                "grid max logZ": float(zt.max()),
                "refined γ*": best.extra["gamma"],
                "refined λ*": best.lam,
                "refined logZ": best.log_z,
                "max |ΔlogZ| vs rep 0": float((zt - grids[0]).abs().max()),
                "standard λ*": std.lam,
                "standard logZ": std.log_z,
            }
        )
        reporter.figure(f"landscape/rep{r}", _heatmap(zt, gammas, lams, (gi, li), r))
        reporter.table("argmax", rows)
    for gi in range(0, len(gammas), max(1, len(gammas) // 5)):
        reporter.series(f"slice/gamma_{gammas[gi]:.2f}", torch.log10(lams).tolist(), grids[0][gi].tolist())
    reporter.progress(1.0, "done")
    dev = max(float((g - grids[0]).abs().max()) for g in grids)
    rel_dev = max(float(((g - grids[0]).abs() / grids[0].abs()).max()) for g in grids)
    return {
        "P": tr.mlp.n_params,
        "gamma_star": rows[0]["refined γ*"],
        "lambda_star": rows[0]["refined λ*"],
        "logz_star": rows[0]["refined logZ"],
        "grid_max_abs_dev": dev,
        "grid_max_rel_dev": rel_dev,
        "gamma_star_max_abs_dev": max(abs(r["refined γ*"] - rows[0]["refined γ*"]) for r in rows),
        "standard_logz_min": min(r["standard logZ"] for r in rows),
        "standard_logz_max": max(r["standard logZ"] for r in rows),
    }


def _heatmap(z: Tensor, gammas: np.ndarray, lams: Tensor, arg: tuple[int, int], r: int) -> dict[str, Any]:
    zz = z.clone()
    zz[zz < zz.max() - 200] = zz.max() - 200  # keep the colour scale on the interesting range
    return {
        "data": [
            {
                "type": "heatmap",
                "z": zz.tolist(),
                "x": torch.log10(lams).tolist(),
                "y": gammas.tolist(),
                "colorscale": "Viridis",
                "colorbar": {"title": "log Z"},
            },
            {
                "type": "scatter",
                "mode": "markers",
                "x": [float(torch.log10(lams[arg[1]]))],
                "y": [float(gammas[arg[0]])],
                "marker": {"symbol": "x", "size": 12, "color": "red"},
                "name": "argmax",
            },
        ],
        "layout": {"title": f"log Z(γ, λ), representative {r}", "xaxis": {"title": "log10 λ"}, "yaxis": {"title": "γ"}},
    }


# ------------------------------------------------------------------------------------------------
# Experiment 3: held-out quality
# ------------------------------------------------------------------------------------------------
def ece(probs: Tensor, y: Tensor, n_bins: int = 15) -> tuple[float, list[dict[str, float]]]:
    """Expected calibration error (top-label, equal-width confidence bins) and the reliability bins."""
    conf, pred = probs.max(-1)
    correct = (pred == y).to(DTYPE)
    edges = torch.linspace(0, 1, n_bins + 1, dtype=DTYPE, device=probs.device)
    total, bins = 0.0, []
    for lo, hi in pairwise(edges):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            gap = float((correct[m].mean() - conf[m].mean()).abs())
            total += float(m.to(DTYPE).mean()) * gap
            bins.append({"conf": float(conf[m].mean()), "acc": float(correct[m].mean()), "n": int(m.sum())})
    return total, bins


def regression_calibration(mu: Tensor, sd: Tensor, y: Tensor, n_levels: int = 15) -> tuple[float, list[float]]:
    """Quantile calibration error: mean |coverage(p) − p| of central intervals, p on a 15-level grid."""
    ps = torch.linspace(0.05, 0.95, n_levels, dtype=DTYPE, device=mu.device)
    z = ((y - mu) / sd).abs()
    normal = torch.distributions.Normal(mu.new_tensor(0.0), mu.new_tensor(1.0))
    cov = [float((z <= normal.icdf(0.5 + p / 2)).to(DTYPE).mean()) for p in ps]
    return float(np.mean(np.abs(np.array(cov) - ps.cpu().numpy()))), cov


def _metrics(tr: Trained, fit: LaplaceFit | None, f: Tensor, jac: Tensor, split: Any) -> dict[str, Any]:
    """Held-out metrics of one method on one split, from f (T, K) and J (T, K, P) at the representative."""
    if tr.data.likelihood == "regression":
        var = torch.full_like(f[:, 0], tr.cfg.sigma**2)
        if fit is not None:
            var = var + fit.latent_cov(jac)[:, 0, 0]
        mu, y, sd = f[:, 0], split.y[:, 0], var.sqrt()
        nll = float((0.5 * torch.log(2 * math.pi * var) + (y - mu) ** 2 / (2 * var)).mean())
        cal, curve = regression_calibration(mu, sd, y)
        return {
            "nll": nll,
            "rmse": float(((y - mu) ** 2).mean().sqrt()),
            "ece": cal,
            "coverage95": float(((y - mu).abs() <= 1.959964 * sd).to(DTYPE).mean()),
            "curve": curve,
        }
    probs = torch.softmax(f, -1) if fit is None else probit_probs(f, fit.latent_cov(jac))
    nll = float(-torch.log(probs.gather(-1, split.y[:, None]).clamp_min(1e-300)).mean())
    e, bins = ece(probs, split.y)
    return {"nll": nll, "acc": float((probs.argmax(-1) == split.y).to(DTYPE).mean()), "ece": e, "curve": bins}


def heldout(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Held-out NLL and calibration of MAP, standard EB (scalar, layer-wise), canonical γ = ½ and γ*."""
    cfg = HeldoutConfig.from_params(params)
    tr = prepare(cfg, reporter)
    reps = representatives(tr, cfg.n_rescalings, cfg.log10_scale_range)
    methods = (
        ["map", "standard_scalar"]
        + (["standard_layerwise"] if cfg.layerwise else [])
        + ["canonical_half", "canonical_star"]
    )
    res: dict[str, list[dict[str, dict[str, Any]]]] = {m: [] for m in methods}
    for r, theta in enumerate(reps):
        if reporter.should_stop():
            break
        reporter.progress(0.4 + 0.55 * r / len(reps), f"representative {r + 1}/{len(reps)}")
        rep = at(tr, theta)
        fits: dict[str, LaplaceFit | None] = {"map": None}
        fits["standard_scalar"] = fit_standard_scalar(rep.curv, theta, rep.loglik)
        if cfg.layerwise:
            fits["standard_layerwise"] = fit_standard_layerwise(
                rep.curv, theta, rep.loglik, tr.mlp.groups(), fits["standard_scalar"].lam
            )  # type: ignore[union-attr]
        fits["canonical_half"] = fit_canonical(tr, rep, 0.5)
        fits["canonical_star"] = select_gamma(tr, rep)[0]
        splits = {"in": tr.data.test_in, "out": tr.data.test_out}
        fj = {k: (tr.mlp.forward(theta, sp.x), jacobian(tr.mlp, theta, sp.x)) for k, sp in splits.items()}
        for m in methods:
            res[m].append({k: _metrics(tr, fits[m], *fj[k], sp) for k, sp in splits.items()})
    cls = tr.data.likelihood == "classification"
    keys = ["nll", "ece", "acc"] if cls else ["nll", "ece", "rmse", "coverage95"]
    rows, spread = [], []
    for m in methods:
        row: dict[str, Any] = {"method": m}
        srow: dict[str, Any] = {"method": m}
        for split in ("in", "out"):
            for k in keys:
                vals = [rr[split][k] for rr in res[m]]
                row[f"{k}_{split}"] = vals[0]
                srow[f"{k}_{split} range"] = max(vals) - min(vals)
        rows.append(row)
        spread.append(srow)
    reporter.table("metrics", rows)
    reporter.table("spread", spread)
    reporter.figure("reliability", _reliability_figure(res, methods, cls))
    reporter.progress(1.0, "done")
    out = {f"{r['method']}/{k}": v for r in rows for k, v in r.items() if k != "method"}
    out["P"] = tr.mlp.n_params
    return out


def _reliability_figure(
    res: dict[str, list[dict[str, dict[str, Any]]]], methods: list[str], cls: bool
) -> dict[str, Any]:
    data: list[dict[str, Any]] = []
    if cls:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": [0.5, 1],
                "y": [0.5, 1],
                "name": "ideal",
                "line": {"dash": "dot", "color": "gray"},
            }
        )
        for m in methods:
            bins = res[m][0]["in"]["curve"]
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": m,
                    "x": [b["conf"] for b in bins],
                    "y": [b["acc"] for b in bins],
                }
            )
        layout = {
            "title": "Reliability (in-range test, trained representative)",
            "xaxis": {"title": "confidence"},
            "yaxis": {"title": "accuracy"},
        }
    else:
        ps = np.linspace(0.05, 0.95, 15).tolist()
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": ps,
                "y": ps,
                "name": "ideal",
                "line": {"dash": "dot", "color": "gray"},
            }
        )
        for m in methods:
            for split, dash in (("in", "solid"), ("out", "dash")):
                data.append(
                    {
                        "type": "scatter",
                        "mode": "lines",
                        "name": f"{m} ({split})",
                        "x": ps,
                        "y": res[m][0][split]["curve"],
                        "line": {"dash": dash},
                    }
                )
        layout = {
            "title": "Interval calibration (trained representative)",
            "xaxis": {"title": "nominal level"},
            "yaxis": {"title": "empirical coverage"},
        }
    return {"data": data, "layout": layout}

"""Entry points of the four causal_samplesize experiments: ``fn(params, reporter) -> summary``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from compute.core.reporter import Reporter

from . import lp
from .bounds import THETA_NAMES, consistent, endpoint, theta_from_joint, tian_pearl
from .config import CalculatorConfig, KinkConfig, RatioConfig, SimulationConfig
from .inference import (
    bootstrap_ci,
    clark_expected_max,
    directional_delta_ci,
    m_out_of_n_bootstrap_ci,
    naive_delta_ci,
)
from .rules import (
    RULE_LABELS,
    RULES,
    Allocation,
    BaselineNotImplemented,
    EndpointDesign,
    ExternalDesign,
    Pilot,
    combined_n,
    design,
    plugin,
    popoviciu_variances,
    sample_pilot,
    sigma1,
    total_units,
    z_value,
)
from .sampling import sample_theta

NOT_IMPLEMENTED = "not implemented (Li–Mao–Pearl 2022 formula unavailable)"
NO_BASELINE = "not measured: Li–Mao–Pearl 2022 formula unavailable; enter its n_e and n_o to compare"


def _external(cfg: CalculatorConfig | SimulationConfig) -> ExternalDesign | None:
    """The user-entered baseline design, or None when neither size is given."""
    if cfg.baseline_n_e <= 0 and cfg.baseline_n_o <= 0:
        return None
    return ExternalDesign(int(cfg.baseline_n_e), int(cfg.baseline_n_o), cfg.basis)


def _sizes(ds: list[EndpointDesign], alloc: Allocation, mult: float = 1.0) -> tuple[int, int, int]:
    """(n per arm, n_e total, n_o) of a design list at ``mult`` × its n; a user-entered design keeps its own split."""
    if ds[0].rule == "baseline":
        d = ds[0]
        return ExternalDesign(d.n_arm, d.n_o).sizes(mult)
    return alloc.sizes(mult * combined_n(ds))


def _ratio_rows(totals: dict[str, tuple[int, int, int]]) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """n_baseline / n_rule on all recruited units (n_e total + n_o) and on n per arm, for every computed rule."""
    if "baseline" not in totals:
        return [{"rule": "—", "note": NO_BASELINE}], {}
    b_arm, b_tot, b_o = totals["baseline"]
    rows, out = [], {}
    for rule, (n_arm, n_tot, n_o) in totals.items():
        if rule == "baseline":
            continue
        r_units = total_units(b_tot, b_o) / total_units(n_tot, n_o)
        rows.append(
            {
                "rule": RULE_LABELS[rule],
                "units (n_e total + n_o)": total_units(n_tot, n_o),
                "baseline units": total_units(b_tot, b_o),
                "n_baseline / n_rule (all units)": r_units,
                "n_baseline / n_rule (per arm)": b_arm / n_arm,
            }
        )
        out[rule] = r_units
    return rows, out


# ------------------------------------------------------------------------------------------------
# Experiment 1: calculator
# ------------------------------------------------------------------------------------------------
def _check_theta(theta: np.ndarray) -> np.ndarray:
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (6,) or np.any(theta < 0) or np.any(theta > 1):
        raise ValueError("planning values must be 6 probabilities (e1, e0, o11, o10, o01, o00)")
    if abs(theta[2:].sum() - 1) > 1e-6:
        raise ValueError(f"observational cells o11+o10+o01+o00 must sum to 1 (got {theta[2:].sum():.4f})")
    if not consistent(theta, tol=1e-9):
        raise ValueError("planning values are incompatible: need o11 ≤ e1 ≤ 1 − o10 and o01 ≤ e0 ≤ 1 − o00")
    return theta


def _pilot_from_counts(counts: tuple[int, ...]) -> Pilot:
    s1, m1, s0, m0, *obs = counts
    return Pilot(s1, m1, s0, m0, tuple(obs))


def _source_contributions(theta: np.ndarray, grad: np.ndarray, alloc: Allocation) -> dict[str, float]:
    """Per-observation variance of the driving term split by source: e1, e0, observational block."""
    s = sigma1(theta, alloc)
    return {
        "experimental x (e1)": float(grad[0] ** 2 * s[0, 0]),
        "experimental x' (e0)": float(grad[1] ** 2 * s[1, 1]),
        "observational": float(grad[2:] @ s[2:, 2:] @ grad[2:]),
    }


def calculator(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Required n per source for a PoC endpoint under each rule, with formulas and a variance table."""
    cfg = CalculatorConfig.from_params(params)
    alloc = Allocation(cfg.ratio, cfg.basis)
    reporter.log(f"allocation: n_o = {alloc.r_o:g} × n_e per arm (n_e given {cfg.basis.replace('_', ' ')})")
    if cfg.family == "MULTI":
        return _calculator_multi(cfg, alloc, reporter)
    theta = _check_theta(np.array(cfg.planning))
    pilot = _pilot_from_counts(cfg.pilot)
    external = _external(cfg) if cfg.family == "PNS" else None  # the baseline covers binary PNS only
    rows, bars, summary = [], [], {}
    totals: dict[str, tuple[int, int, int]] = {}
    for i, rule in enumerate(RULES):
        reporter.progress(i / len(RULES), RULE_LABELS[rule])
        try:
            ds = design(
                cfg.family,
                cfg.side,
                rule,
                cfg.eps,
                cfg.confidence,
                alloc,
                theta=theta,
                pilot=pilot,
                alpha_p=cfg.alpha_p,
                external=external,
            )
        except BaselineNotImplemented:
            rows.append({"rule": RULE_LABELS[rule], "endpoint": cfg.side, "formula": NOT_IMPLEMENTED})
            summary[f"n_{rule}"] = "not implemented"
            continue
        except ValueError as exc:
            rows.append({"rule": RULE_LABELS[rule], "endpoint": cfg.side, "formula": f"n/a: {exc}"})
            summary[f"n_{rule}"] = "n/a"
            continue
        for d in ds:
            rows.append(
                {
                    "rule": RULE_LABELS[rule],
                    "endpoint": d.endpoint,
                    "n per arm": d.n_arm,
                    "n_e total": d.n_e_total,
                    "n_o": d.n_o,
                    "active term": d.active,
                    "formula": d.formula,
                }
            )
        n_arm, n_tot, n_o = _sizes(ds, alloc)
        totals[rule] = (n_arm, n_tot, n_o)
        bars.append({"rule": rule, "n per arm": n_arm, "n_e total": n_tot, "n_o": n_o})
        summary[f"n_{rule}"] = n_arm
        summary[f"n_o_{rule}"] = n_o
    reporter.table("designs", rows)
    reporter.table("required_n", bars)
    ratio_rows, ratios = _ratio_rows(totals)
    reporter.table("baseline_ratio", ratio_rows)
    for rule, r in ratios.items():
        summary[f"ratio_baseline_to_{rule}"] = r
    # term-by-term table and source contributions at the planning values
    z = z_value(cfg.confidence, both=cfg.side == "both")
    term_rows, src_rows = [], []
    for side in ["lower", "upper"] if cfg.side == "both" else [cfg.side]:
        ep = endpoint(cfg.family, side)
        d = plugin(ep, theta, cfg.eps, (1 - cfg.confidence) / (2 if cfg.side == "both" else 1), alloc)
        pv = popoviciu_variances(ep, alloc)
        for r, v in zip(d.terms, pv, strict=True):
            term_rows.append({"endpoint": ep.name, **r, "Popoviciu V_k": None if np.isnan(v) else float(v)})
        k = ep.labels.index(d.active)
        for src, v in _source_contributions(theta, ep.gradients(theta)[k], alloc).items():
            src_rows.append({"source": f"{ep.name}: {src}", "variance": v})
    reporter.table("terms", term_rows)
    reporter.table("variance_sources", src_rows)
    lo, hi = tian_pearl(theta, cfg.family)
    reporter.log(f"{cfg.family} bounds at the planning values: [{lo:.4f}, {hi:.4f}]; z = {z:.4f}")
    reporter.progress(1.0, "done")
    summary.update({"bound_lower": float(lo), "bound_upper": float(hi), "z": z})
    return summary


def _calculator_multi(cfg: CalculatorConfig, alloc: Allocation, reporter: Reporter) -> dict[str, Any]:
    """Multi-valued family: LP bounds at a Dirichlet planning joint; the dual is the active gradient."""
    fam = lp.Family(cfg.kx, cfg.ky, cfg.query, cfg.xa, cfg.ya, cfg.xb, cfg.yb)
    q = fam.random_joint(np.random.default_rng(cfg.seed))
    b = fam.data_from_joint(q)
    z = z_value(cfg.confidence, both=cfg.side == "both")
    r_o = cfg.ratio * (fam.kx if cfg.basis == "total" else 1.0)  # n_o per unit of the per-arm n_e (kx arms)
    cov = lp.per_obs_covariance(fam, b, r_e=1.0, r_o=r_o)
    rows, bars, src_rows, summary = [], [], [], {"truth": fam.true_value(q)}
    sides = ["lower", "upper"] if cfg.side == "both" else [cfg.side]
    need = {"distribution_free": 0.0, "plugin_active": 0.0}
    term_rows = []
    rng = np.random.default_rng(cfg.seed + 1)
    for side in sides:
        res = lp.lp_bound(fam, b, side)
        summary[f"bound_{side}"] = res.value
        grads = lp.near_active_duals(fam, q, side, cfg.eps, rng)
        v_all = [float(h @ cov @ h) for h in grads]
        g = grads[int(np.argmax(v_all))]  # worst near-active piece (directional worst case)
        term_rows += [
            {
                "endpoint": side,
                "b": name,
                "value": float(b[i]),
                "dual ∂v/∂b (at b)": float(res.grad[i]),
                "worst near-active dual": float(g[i]),
            }
            for i, name in enumerate(fam.b_names())
        ]
        v_plug = max(v_all)
        if fam.denominator_index() is None:
            v_df = max(lp.popoviciu_variance(fam, h, r_e=1.0, r_o=r_o) for h in grads)
        else:
            v_df = float("nan")
        for rule, v in (("distribution_free", v_df), ("plugin_active", v_plug)):
            if np.isnan(v):
                rows.append({"rule": RULE_LABELS[rule], "endpoint": side, "formula": "n/a: ratio query (not affine)"})
                continue
            n = z**2 * v / cfg.eps**2
            need[rule] = max(need[rule], n)
            n_arm = max(1, math.ceil(n - 1e-9))
            rows.append(
                {
                    "rule": RULE_LABELS[rule],
                    "endpoint": side,
                    "n per arm": n_arm,
                    "n_e total": fam.kx * n_arm,
                    "n_o": max(1, math.ceil(r_o * n - 1e-9)),
                    "active term": f"worst of {len(grads)} LP dual vertices within ε",
                    "formula": f"n = z²·v/ε² = {z:.4f}²·{v:.4g}/{cfg.eps:g}² = {n:.2f}",
                }
            )
        m = fam.n_exp
        src_rows.append({"source": f"{side}: experimental arms", "variance": float(g[:m] @ cov[:m, :m] @ g[:m])})
        src_rows.append({"source": f"{side}: observational", "variance": float(g[m:] @ cov[m:, m:] @ g[m:])})
    rows.append(
        {"rule": RULE_LABELS["baseline"], "endpoint": cfg.side, "formula": NOT_IMPLEMENTED + "; binary PNS only"}
    )
    reporter.table("baseline_ratio", [{"rule": "—", "note": "the Li–Mao–Pearl baseline is for binary PNS only"}])
    for rule, n in need.items():
        if n > 0:
            n_arm = max(1, math.ceil(n - 1e-9))
            bars.append(
                {"rule": rule, "n per arm": n_arm, "n_e total": fam.kx * n_arm, "n_o": math.ceil(r_o * n - 1e-9)}
            )
            summary[f"n_{rule}"] = n_arm
    reporter.table("designs", rows)
    reporter.table("required_n", bars)
    reporter.table("terms", term_rows)
    reporter.table("variance_sources", src_rows)
    reporter.log(f"{fam.query} (|X|={fam.kx}, |Y|={fam.ky}) truth {summary['truth']:.4f}, LP bounds {summary}")
    reporter.progress(1.0, "done")
    return summary


# ------------------------------------------------------------------------------------------------
# Experiment 2: precision and coverage simulation
# ------------------------------------------------------------------------------------------------
def _err_figure(errs: dict[str, list[float]], eps: float) -> dict[str, Any]:
    data = [
        {"type": "histogram", "x": v, "name": RULE_LABELS[r], "opacity": 0.6, "nbinsx": 60} for r, v in errs.items()
    ]
    shapes = [
        {"type": "line", "x0": s * eps, "x1": s * eps, "yref": "paper", "y0": 0, "y1": 1, "line": {"dash": "dash"}}
        for s in (-1, 1)
    ]
    return {"data": data, "layout": {"barmode": "overlay", "shapes": shapes, "xaxis": {"title": "L̂ − L"}}}


def precision_coverage(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Attainment P(|L̂ − L| ≤ ε), CI coverage, bias, crossing and inconsistency vs n, per rule."""
    if any(k.startswith("use_") for k in params):  # declared as one Bool per rule
        params = {**params, "rules": tuple(r for r in RULES if params.get(f"use_{r}", False))}
    cfg = SimulationConfig.from_params(params)
    rng = np.random.default_rng(cfg.seed)
    alloc = Allocation(cfg.ratio, cfg.basis)
    external = _external(cfg) if cfg.family == "PNS" else None  # the baseline covers binary PNS only
    both = cfg.side == "both"
    sides = ["lower", "upper"] if both else [cfg.side]
    eps_ = [endpoint(cfg.family, s) for s in sides]
    alpha_ci = (1 - cfg.confidence) / len(sides)
    zc = float(stats.norm.ppf(1 - alpha_ci / 2))  # per-endpoint CI level (Bonferroni for both)
    if cfg.joint:
        p = np.asarray(cfg.joint, dtype=float)
        truths = (p / p.sum())[None]
    else:
        truths = rng.dirichlet(np.ones(8), size=cfg.n_truths)
    mults = list(cfg.multipliers)
    rules = [r for r in cfg.rules if r in RULES]
    stats_: dict[str, dict[float, list[dict[str, float]]]] = {r: {m: [] for m in mults} for r in rules}
    skipped: dict[str, str] = {}
    errs: dict[str, list[float]] = {}
    per_truth = []
    total = len(truths) * len(rules)
    step = 0
    for i, p in enumerate(truths):
        th = theta_from_joint(p)
        lval = np.array([ep.value(th) for ep in eps_])
        pilot = sample_pilot(th, cfg.pilot_size, cfg.pilot_size, rng)
        for rule in rules:
            step += 1
            reporter.progress(step / total, f"truth {i + 1}/{len(truths)}: {RULE_LABELS[rule]}")
            try:
                ds = design(
                    cfg.family,
                    cfg.side,
                    rule,
                    cfg.eps,
                    cfg.confidence,
                    alloc,
                    theta=th,
                    pilot=pilot,
                    alpha_p=cfg.alpha_p,
                    external=external,
                )
            except BaselineNotImplemented:
                skipped[rule] = NOT_IMPLEMENTED
                continue
            except ValueError as exc:
                skipped[rule] = f"n/a: {exc}"
                continue
            for m in mults:
                n_arm, n_tot, n_o = _sizes(ds, alloc, m)
                thh = sample_theta(th, n_arm, n_arm, n_o, cfg.reps, rng)
                lhat = np.stack([ep.value(thh) for ep in eps_], axis=1)  # (R, E)
                err = lhat - lval
                ok = np.all(np.abs(np.nan_to_num(err, nan=np.inf)) <= cfg.eps, axis=1)
                nci = min(cfg.ci_reps, cfg.reps)  # CIs on the first ci_reps replicates (MC cost)
                tci = thh[:nci]
                cov_naive = np.ones(nci, bool)
                cov_dir = np.ones(nci, bool)
                cov_cons = np.ones(nci, bool)
                for j, ep in enumerate(eps_):
                    lo, hi = naive_delta_ci(ep, tci, n_arm, n_arm, n_o, zc)
                    cov_naive &= (lo <= lval[j]) & (lval[j] <= hi)
                    lo, hi, _ = directional_delta_ci(ep, tci, n_arm, n_arm, n_o, alpha_ci, rng, draws=cfg.mc_draws)
                    cov_dir &= (lo <= lval[j]) & (lval[j] <= hi)
                    lo, hi, _ = directional_delta_ci(
                        ep, tci, n_arm, n_arm, n_o, alpha_ci, rng, draws=cfg.mc_draws, conservative=True
                    )
                    cov_cons &= (lo <= lval[j]) & (lval[j] <= hi)
                tl, tu = tian_pearl(thh, cfg.family)
                stats_[rule][m].append(
                    {
                        "n_arm": n_arm,
                        "n_o": n_o,
                        "units": total_units(n_tot, n_o),
                        "attain": float(ok.mean()),
                        "cov_naive": float(cov_naive.mean()),
                        "cov_dir": float(cov_dir.mean()),
                        "cov_cons": float(cov_cons.mean()),
                        "bias": float(np.nanmean(err[:, 0])),
                        "crossing": float(np.mean(tl > tu)),
                        "inconsistent": float(np.mean(~consistent(thh))),
                        "undefined": float(np.mean(np.isnan(lhat).any(axis=1))),
                    }
                )
                if m == 1.0:
                    sub = err[: min(100, cfg.reps), 0]
                    sub = sub[np.isfinite(sub)].tolist()
                    errs.setdefault(rule, []).extend(sub)
                    reporter.series(f"err/{rule}", list(range(len(sub))), sub)
            if 1.0 in stats_[rule] and stats_[rule][1.0]:
                reporter.scalar(f"running_min_attain/{rule}", i + 1, min(s["attain"] for s in stats_[rule][1.0]))
                per_truth.append({"truth": i + 1, "rule": rule, **stats_[rule][1.0][-1]})
        if reporter.should_stop():
            break
    rows, summary = [], {"target": cfg.confidence, "mc_se": math.sqrt(cfg.confidence * (1 - cfg.confidence) / cfg.reps)}
    for rule in rules:
        done = [m for m in mults if stats_[rule][m]]
        if not done:
            rows.append({"rule": RULE_LABELS[rule], "note": skipped.get(rule, "no data")})
            summary[f"{rule}"] = skipped.get(rule, "no data")
            continue
        reporter.series(f"attain/{rule}", done, [float(np.mean([s["attain"] for s in stats_[rule][m]])) for m in done])
        reporter.series(
            f"attain_min/{rule}", done, [float(np.min([s["attain"] for s in stats_[rule][m]])) for m in done]
        )
        reporter.series(
            f"coverage_naive/{rule}", done, [float(np.mean([s["cov_naive"] for s in stats_[rule][m]])) for m in done]
        )
        reporter.series(
            f"coverage_directional/{rule}",
            done,
            [float(np.mean([s["cov_dir"] for s in stats_[rule][m]])) for m in done],
        )
        reporter.series(
            f"coverage_conservative/{rule}",
            done,
            [float(np.mean([s["cov_cons"] for s in stats_[rule][m]])) for m in done],
        )
        for m in done:
            st = stats_[rule][m]
            rows.append(
                {
                    "rule": RULE_LABELS[rule],
                    "n / n_rule": m,
                    "mean n per arm": float(np.mean([s["n_arm"] for s in st])),
                    "mean n_o": float(np.mean([s["n_o"] for s in st])),
                    "mean attainment": float(np.mean([s["attain"] for s in st])),
                    "min attainment": float(np.min([s["attain"] for s in st])),
                    "coverage naive Δ": float(np.mean([s["cov_naive"] for s in st])),
                    "coverage directional Δ": float(np.mean([s["cov_dir"] for s in st])),
                    "coverage conservative dir. Δ": float(np.mean([s["cov_cons"] for s in st])),
                    "bias": float(np.mean([s["bias"] for s in st])),
                    "crossing": float(np.mean([s["crossing"] for s in st])),
                    "inconsistent": float(np.mean([s["inconsistent"] for s in st])),
                    "undefined (P(x,y)=0)": float(np.mean([s["undefined"] for s in st])),
                }
            )
        if 1.0 in done:
            st = stats_[rule][1.0]
            summary[f"{rule}_mean_n"] = float(np.mean([s["n_arm"] for s in st]))
            summary[f"{rule}_mean_attain"] = float(np.mean([s["attain"] for s in st]))
            summary[f"{rule}_min_attain"] = float(np.min([s["attain"] for s in st]))
    # n_baseline / n_rule on all recruited units, truth by truth, at each rule's own n (multiplier 1)
    have_b = 1.0 in stats_.get("baseline", {}) and stats_["baseline"][1.0]
    ratio_rows: list[dict[str, Any]] = []
    for rule in rules:
        if not have_b or rule == "baseline" or not stats_[rule].get(1.0):
            continue
        b_units = stats_["baseline"][1.0][0]["units"]  # the same fixed design for every truth
        r = np.array([b_units / s["units"] for s in stats_[rule][1.0]])
        ratio_rows.append(
            {
                "rule": RULE_LABELS[rule],
                "baseline units": b_units,
                "mean rule units": float(np.mean([s["units"] for s in stats_[rule][1.0]])),
                "mean n_baseline / n_rule": float(r.mean()),
                "min n_baseline / n_rule": float(r.min()),
                "max n_baseline / n_rule": float(r.max()),
                "rule min attainment": float(np.min([s["attain"] for s in stats_[rule][1.0]])),
                "baseline min attainment": float(np.min([s["attain"] for s in stats_["baseline"][1.0]])),
            }
        )
        summary[f"ratio_baseline_to_{rule}"] = float(r.mean())
    if not ratio_rows:
        ratio_rows = [{"rule": "—", "note": NO_BASELINE}]
        summary["ratio_baseline_to_rule"] = NO_BASELINE
    reporter.table("baseline_ratio", ratio_rows)
    reporter.series("attain/target", mults, [cfg.confidence] * len(mults))
    reporter.table("summary", rows)
    reporter.table("per_truth", per_truth)
    if errs:
        reporter.figure("err_hist", _err_figure(errs, cfg.eps))
    return summary


# ------------------------------------------------------------------------------------------------
# Experiment 3: kink stress test
# ------------------------------------------------------------------------------------------------
def kink_theta(gap: float, tie: str = "pair") -> np.ndarray:
    """θ for the kink test of the PNS lower bound max{0, e1 − e0, P(y) − e0, e1 − P(y)} with gap Δ.

    "pair": e1 = .65, e0 = .4, P(y) = .4 − Δ, P(x) = .5, so e1 − P(y) = (e1 − e0) + Δ (two-way tie at Δ = 0).
    "null": e1 = e0 = .4, P(y) = .4 − Δ: no average effect; all four terms tie at 0 when Δ = 0.
    """
    e1 = 0.65 if tie == "pair" else 0.40
    return np.array([e1, 0.40, 0.20, 0.30, 0.20 - gap, 0.30 + gap])


def kink_stress(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Coverage of naive/directional delta, percentile and m-out-of-n bootstrap CIs and the bias of the max vs Δ."""
    cfg = KinkConfig.from_params(params)
    rng = np.random.default_rng(cfg.seed)
    ep = endpoint("PNS", "lower")
    alpha = 1 - cfg.confidence
    z = z_value(cfg.confidence)
    n = cfg.n
    rows = []
    for i, gap in enumerate(cfg.gaps):
        reporter.progress(i / len(cfg.gaps), f"Δ = {gap:g}")
        th = kink_theta(gap, cfg.tie)
        lval = float(ep.value(th))
        thh = sample_theta(th, n, n, n, cfg.reps, rng)
        lhat = ep.value(thh)
        cov = {}
        lo, hi = naive_delta_ci(ep, thh, n, n, n, z)
        cov["naive"] = float(np.mean((lo <= lval) & (lval <= hi)))
        lo, hi, _ = directional_delta_ci(ep, thh, n, n, n, alpha, rng, draws=cfg.mc_draws)
        cov["directional"] = float(np.mean((lo <= lval) & (lval <= hi)))
        lo, hi, _ = directional_delta_ci(ep, thh, n, n, n, alpha, rng, draws=cfg.mc_draws, conservative=True)
        cov["conservative"] = float(np.mean((lo <= lval) & (lval <= hi)))
        lo, hi = bootstrap_ci(ep, thh, n, n, n, alpha, rng, boots=cfg.boots)
        cov["bootstrap"] = float(np.mean((lo <= lval) & (lval <= hi)))
        lo, hi = m_out_of_n_bootstrap_ci(ep, thh, n, n, n, alpha, rng, boots=cfg.boots, gamma=cfg.gamma)
        cov["m_out_of_n"] = float(np.mean((lo <= lval) & (lval <= hi)))
        # Clark (1961) closed form for E[max(T̂1, T̂2)] − L of the two competing terms
        e1, e0, o11, _, o01, _ = th
        py = o11 + o01
        s1 = math.sqrt(e1 * (1 - e1) / n + e0 * (1 - e0) / n)  # sd(ê1 − ê0)
        s2 = math.sqrt(e1 * (1 - e1) / n + py * (1 - py) / n)  # sd(ê1 − P̂(y))
        rho = (e1 * (1 - e1) / n) / (s1 * s2)  # shared ê1
        clark = clark_expected_max(e1 - e0, e1 - py, s1, s2, rho) - lval if cfg.tie == "pair" else float("nan")
        bias = float(np.mean(lhat) - lval)
        bias_se = float(np.std(lhat) / math.sqrt(cfg.reps))
        reporter.scalars(
            gap,
            {
                "coverage/naive_delta": cov["naive"],
                "coverage/directional_delta": cov["directional"],
                "coverage/conservative_directional": cov["conservative"],
                "coverage/bootstrap": cov["bootstrap"],
                "coverage/m_out_of_n_bootstrap": cov["m_out_of_n"],
                "coverage/nominal": cfg.confidence,
                "bias/simulated": bias,
                "bias/clark_closed_form": clark,
            },
        )
        rows.append(
            {
                "Δ": gap,
                **{f"coverage {k}": v for k, v in cov.items()},
                "bias": bias,
                "bias s.e.": bias_se,
                "Clark bias": clark,
            }
        )
        if reporter.should_stop():
            break
    reporter.table("kink", rows)
    reporter.progress(1.0, "done")
    r0 = rows[0]
    return {
        "coverage_naive_at_tie": r0["coverage naive"],
        "coverage_directional_at_tie": r0["coverage directional"],
        "coverage_conservative_at_tie": r0["coverage conservative"],
        "coverage_bootstrap_at_tie": r0["coverage bootstrap"],
        "coverage_m_out_of_n_at_tie": r0["coverage m_out_of_n"],
        "bias_at_tie": r0["bias"],
        "clark_bias_at_tie": r0["Clark bias"],
    }


# ------------------------------------------------------------------------------------------------
# Experiment 4: ratio sensitivity
# ------------------------------------------------------------------------------------------------
def ratio_theta(p_xy: float) -> np.ndarray:
    """θ with P(x,y) = s: cells p(1,1,0)=.7s, p(1,1,1)=.3s, p(1,0,1)=.1s, p(1,0,0)=.6−1.1s, x=0 cells .1 each.

    PN lower term (P(y) − e0)/o11 = 1 − (p111 + p101)/s = 0.6 is active for every s, PN = 0.7.
    """
    s = p_xy
    p = np.zeros(8)
    p[[0, 1, 2, 3]] = 0.1  # x = 0 cells
    p[4 + 2 * 1 + 0] = 0.7 * s  # (1, 1, 0)
    p[4 + 2 * 1 + 1] = 0.3 * s  # (1, 1, 1)
    p[4 + 0 + 1] = 0.1 * s  # (1, 0, 1)
    p[4 + 0 + 0] = 0.6 - 1.1 * s  # (1, 0, 0)
    return theta_from_joint(p)


def _attainment(
    ep: Any, th: np.ndarray, lval: float, n: float, eps: float, reps: int, rng: np.random.Generator
) -> float:
    n = int(math.ceil(n))
    thh = sample_theta(th, n, n, n, reps, rng)
    err = np.nan_to_num(ep.value(thh) - lval, nan=np.inf)
    return float(np.mean(np.abs(err) <= eps))


def ratio_sensitivity(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Required n for the PN lower endpoint vs P(x, y) (slope −2 on log-log), naive vs safe pilot plug-in."""
    cfg = RatioConfig.from_params(params)
    rng = np.random.default_rng(cfg.seed)
    ep = endpoint("PN", "lower")
    alloc = Allocation(1.0)
    rows, n_true = [], []
    total = len(cfg.p_xy) * len(cfg.pilot_sizes)
    step = 0
    for s in cfg.p_xy:
        th = ratio_theta(s)
        lval = float(ep.value(th))
        nt = combined_n(design("PN", "lower", "plugin_active", cfg.eps, cfg.confidence, alloc, theta=th))
        n_true.append(nt)
        reporter.scalar("n/true_plugin", s, nt)
        for m in cfg.pilot_sizes:
            step += 1
            reporter.progress(step / total, f"P(x,y)={s:g}, pilot {m}")
            res = {"naive": ([], []), "safe": ([], [])}
            for _ in range(cfg.n_pilots):
                pil = sample_pilot(th, m, m, rng)
                for kind, rule in (("naive", "plugin_pilot"), ("safe", "plugin_safe")):
                    try:
                        n = combined_n(
                            design("PN", "lower", rule, cfg.eps, cfg.confidence, alloc, pilot=pil, alpha_p=cfg.alpha_p)
                        )
                    except ValueError:
                        n = float("nan")  # the pilot saw no (x, y) units: no design possible
                    if not np.isfinite(n):
                        res[kind][0].append(np.nan)
                        res[kind][1].append(0.0)
                        continue
                    n = min(n, cfg.n_max)
                    res[kind][0].append(n)
                    res[kind][1].append(_attainment(ep, th, lval, n, cfg.eps, cfg.reps, rng))
            row = {"P(x,y)": s, "pilot": m, "n true": nt}
            for kind in ("naive", "safe"):
                ns, att = np.array(res[kind][0]), np.array(res[kind][1])
                med = float(np.nanmedian(ns)) if np.any(np.isfinite(ns)) else float("nan")
                reporter.scalar(f"n/{kind}_pilot{m}", s, med)
                reporter.scalar(f"attain/{kind}_pilot{m}", s, float(att.mean()))
                row[f"median n {kind}"] = med
                row[f"attainment {kind}"] = float(att.mean())
                row[f"P(n ≥ n true) {kind}"] = float(np.mean(np.nan_to_num(ns, nan=0.0) >= nt))
                row[f"no design {kind}"] = float(np.mean(np.isnan(ns)))
            rows.append(row)
            if reporter.should_stop():
                break
        reporter.scalar("attain/target", s, cfg.confidence)
    slope = (
        float(np.polyfit(np.log(cfg.p_xy[: len(n_true)]), np.log(n_true), 1)[0]) if len(n_true) > 1 else float("nan")
    )
    reporter.table("ratio", rows)
    reporter.log(f"log-log slope of the required n against P(x,y): {slope:.3f} (theory −2 for small P(x,y))")
    reporter.progress(1.0, "done")
    out: dict[str, Any] = {"loglog_slope": slope}
    for m in cfg.pilot_sizes:
        for kind in ("naive", "safe"):
            att = [r[f"attainment {kind}"] for r in rows if r["pilot"] == m]
            if att:
                out[f"min_attain_{kind}_pilot{m}"] = float(min(att))
    return out


__all__ = ["calculator", "precision_coverage", "kink_stress", "ratio_sensitivity", "THETA_NAMES"]

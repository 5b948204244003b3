"""Entry points of the four verifiable_dp experiments: fn(params, reporter) -> summary dict."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import numpy as np

from compute.core.reporter import Reporter, StopRequested

from . import accounting as acc
from .config import ErrorConfig, LoadConfig, PrivacyConfig, ProtocolConfig
from .load import coin_count, protocol_load
from .protocol import CHEATS, ProtocolResult, run_protocol

SHARED_MECHS = ("sn_vbm", "sn_vlm", "independent", "independent_laplace")


def estimate_seconds(mechanism: str, m: int, eps: float, delta: float, k: int, n_coins: int = 0) -> float:
    """Rough 2-core cost: ≈1.2 ms per committed bit (prove + verify), ≈3.5·m ms per multiplication (all-in)."""
    if mechanism.startswith("central"):
        return 0.01
    ld = protocol_load(mechanism, m, eps, delta, k, n_coins)
    return ld.bit_commitments * 1.2e-3 + ld.multiplications * 3.5e-3 * m


# ------------------------------------------------------------------------------------------------
# 1. protocol run and transcript viewer
# ------------------------------------------------------------------------------------------------
def _report_transcript(res: ProtocolResult, reporter: Reporter) -> None:
    phases = []
    for ph in res.phases:
        row: dict[str, Any] = {"phase": ph.name, "seconds": round(ph.seconds, 4)}
        if ph.name == "triples":
            row["phase"] = "triples (dealer + sacrifice)"
            row["dealer_seconds"] = round(res.dealer_seconds, 4)
        row.update({k: v for k, v in ph.counters.items() if v})
        phases.append(row)
    reporter.table("phases", phases)
    reporter.table("load", [{"quantity": k, "count": v} for k, v in vars(res.counters).items()])
    checklist = [{"check": name, "passed": n, "status": "pass"} for name, n in res.checks.items()]
    if res.accepted is False:
        checklist.append(
            {
                "check": res.failed_check,
                "passed": res.checks.get(res.failed_check, 0),
                "status": f"FAIL: {res.failed_detail}",
            }
        )
    reporter.table("checklist", checklist)
    reporter.table("transcript", res.transcript[:200])
    reporter.artifact(
        "transcript.json",
        json.dumps(
            {"phases": phases, "checklist": checklist, "messages": res.transcript}, ensure_ascii=False, indent=1
        ),
    )


def protocol_run(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Run SN-VBM / SN-VLM / independent / central on synthetic records; V's verdict, transcript and load."""
    cfg = ProtocolConfig.from_params(params)
    rng = np.random.default_rng(cfg.seed)  # data / Monte Carlo only; protocol secrets use `secrets`
    m = cfg.m
    cheater = cfg.cheater % m
    est = estimate_seconds(cfg.mechanism, m, cfg.eps, cfg.delta, cfg.k, cfg.coins_override)
    if est > 60:
        reporter.log(f"{cfg.mechanism} at ε={cfg.eps:g} needs ≈{est:.0f} s on 2 cores (coins grow as 1/ε²)", "warning")
    if cfg.public_coins == "fiat_shamir":
        reporter.log(
            "Fiat–Shamir public coins can be ground by colluding provers; interactive V is the default", "warning"
        )
    cheats = ["none", *[c for c in CHEATS if c != "none"]] if cfg.cheat == "all" else [cfg.cheat] * cfg.repeats
    if cfg.cheat == "all":
        cheats = ["none"] * cfg.repeats + cheats[1:]
    verdicts, accepted_honest, n_honest = [], 0, 0
    first: ProtocolResult | None = None
    errors = []
    for i, cheat in enumerate(cheats):
        records = [(rng.random(cfg.records_per_prover) < cfg.record_rate).astype(np.int8) for _ in range(m)]

        def prog(what: str, done: int, total: int, i: int = i) -> None:
            reporter.progress(
                (i + done / max(total, 1)) / len(cheats), f"run {i + 1}/{len(cheats)}: {what} {done}/{total}"
            )
            reporter.check_stop()  # cancel inside long runs (raises StopRequested)

        try:
            res = run_protocol(
                cfg.mechanism,
                m,
                records,
                cfg.eps,
                cfg.delta,
                k=cfg.k,
                cheat=cheat,
                cheater=cheater,
                cheat_coin=int(rng.integers(0, 1 << 30)),
                n_coins=cfg.coins_override,
                fiat_shamir_coins=cfg.public_coins == "fiat_shamir",
                on_progress=prog,
            )
        except StopRequested:
            break
        if first is None or (cfg.cheat not in ("none", "all") and i == 0):
            first = res
        verdict = {None: "unverifiable", True: "accept", False: "reject"}[res.accepted]
        verdicts.append(
            {
                "run": i,
                "cheat": cheat,
                "injected": res.cheat_injected or cheat == "none",
                "verdict": verdict,
                "failing check": res.failed_check,
                "where": res.failed_detail,
                "seconds": round(res.seconds, 3),
            }
        )
        if cheat == "none":
            n_honest += 1
            accepted_honest += res.accepted is not False
        reporter.scalar("verdict/accepted", i, 1.0 if res.accepted is not False else 0.0)
        if res.released is not None:
            reporter.scalars(i, {"release/released": res.released, "release/true_count": res.true_count})
            errors.append(res.released - res.true_count)
        reporter.progress((i + 1) / len(cheats), f"run {i + 1}/{len(cheats)}: {cheat} → {verdict}")
        if reporter.should_stop():
            break
    if first is None:
        reporter.log("cancelled before the first run finished", "warning")
        return {"cancelled": True}
    _report_transcript(first, reporter)
    reporter.table("verdicts", verdicts)
    cheat_rows = [v for v in verdicts if v["cheat"] != "none" and v["injected"]]
    summary = {
        "mechanism": cfg.mechanism,
        "n_coins": first.n_coins,
        "noise_sd": first.noise_sd,
        "honest_accepted": accepted_honest,
        "honest_runs": n_honest,
        "cheats_rejected": sum(v["verdict"] == "reject" for v in cheat_rows),
        "cheats_injected": len(cheat_rows),
        "true_count": first.true_count,
        "released": first.released,
        "seconds_first_run": first.seconds,
    }
    if errors:
        summary["rmse_over_runs"] = float(np.sqrt(np.mean(np.square(errors))))
    return summary


# ------------------------------------------------------------------------------------------------
# 2. error vs number of provers
# ------------------------------------------------------------------------------------------------
def _sample_vlm(rng: np.random.Generator, ts: list[int], k: int, n: int) -> np.ndarray:
    """n draws of the realized SN-VLM noise Σ_i 2^i (1[U₁ᵢ < Tᵢ] − 1[U₂ᵢ < Tᵢ]) (no cryptography)."""
    z = np.zeros(n, dtype=np.int64)
    for sign in (1, -1):
        for i, t in enumerate(ts):
            z += sign * (1 << i) * (rng.integers(0, 1 << k, size=n) < t)
    return z


def error_vs_provers(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """RMSE vs m: shared noise (one sample for all provers) vs independent per-prover noise, analytic + MC."""
    cfg = ErrorConfig.from_params(params)
    rng = np.random.default_rng(cfg.seed)  # data / Monte Carlo only; protocol secrets use `secrets`
    ms = np.arange(1, cfg.m_max + 1)
    n = cfg.mc_draws
    rows, summary = [], {}
    for ie, eps in enumerate(cfg.eps_list):
        tag = f"e{eps:g}"
        n_b = acc.binom_coins(eps, cfg.delta)
        L = acc.dlap_digits(eps)
        ts = acc.thresholds(eps, L, cfg.k)
        pmf, off = acc.realized_dlap(eps, cfg.k)
        zs = np.arange(len(pmf)) - off
        sd_vlm = float(np.sqrt(np.sum(pmf * zs**2)))
        sd_vbm = acc.binom_sd(n_b)
        an = {
            "sn_vbm": np.full(len(ms), sd_vbm),
            "ind_vbm": np.sqrt(ms) * sd_vbm,
            "sn_vlm": np.full(len(ms), sd_vlm),
            "ind_vlm": np.sqrt(ms) * sd_vlm,
        }
        mc: dict[str, list[float]] = {k: [] for k in ("sn_vbm", "ind_vbm", "sn_vlm", "ind_vlm", "central_bin")}
        for m in ms:
            mc["sn_vbm"].append(float(np.sqrt(np.mean((rng.binomial(n_b, 0.5, n) - n_b / 2) ** 2))))
            ind = sum(rng.binomial(n_b, 0.5, n) - n_b / 2 for _ in range(m))
            mc["ind_vbm"].append(float(np.sqrt(np.mean(ind**2))))
            mc["sn_vlm"].append(float(np.sqrt(np.mean(_sample_vlm(rng, ts, cfg.k, n) ** 2.0))))
            ind_l = sum(_sample_vlm(rng, ts, cfg.k, n) for _ in range(m))
            mc["ind_vlm"].append(float(np.sqrt(np.mean(ind_l**2.0))))
            mc["central_bin"].append(float(np.sqrt(np.mean((rng.binomial(n_b, 0.5, n) - n_b / 2) ** 2))))
            reporter.progress((ie + m / cfg.m_max) / len(cfg.eps_list), f"ε={eps:g}: m={m}")
            if reporter.should_stop():
                return summary
        for key, ys in an.items():
            reporter.series(f"rmse_an/{key}_{tag}", ms.tolist(), ys.tolist())
        for key, ys in mc.items():
            reporter.series(f"rmse_mc/{key}_{tag}", ms.tolist(), ys)
        reporter.series(f"ratio/vbm_{tag}", ms.tolist(), (np.array(mc["ind_vbm"]) / np.array(mc["sn_vbm"])).tolist())
        reporter.series(f"ratio/vlm_{tag}", ms.tolist(), (np.array(mc["ind_vlm"]) / np.array(mc["sn_vlm"])).tolist())
        for mech in ("vbm", "vlm"):
            slope = float(np.polyfit(np.log(ms), np.log(mc[f"ind_{mech}"]), 1)[0]) if len(ms) > 1 else float("nan")
            sh = np.array(mc[f"sn_{mech}"])
            se = sh[0] / math.sqrt(2 * n) * math.sqrt(2)  # s.e. of a difference of two RMSE estimates (≈ normal)
            rows.append(
                {
                    "ε": eps,
                    "mechanism": mech,
                    "coins": n_b if mech == "vbm" else 2 * L * cfg.k,
                    "analytic sd": sd_vbm if mech == "vbm" else sd_vlm,
                    "shared RMSE m=1": sh[0],
                    f"shared RMSE m={cfg.m_max}": sh[-1],
                    "shared diff / s.e.": (sh[-1] - sh[0]) / se,
                    f"independent RMSE m={cfg.m_max}": mc[f"ind_{mech}"][-1],
                    "independent log-log slope": slope,
                }
            )
            summary[f"slope_ind_{mech}_{tag}"] = slope
        summary[f"vlm_over_vbm_rmse_{tag}"] = sd_vlm / sd_vbm
        summary[f"central_over_shared_{tag}"] = mc["central_bin"][-1] / mc["sn_vbm"][-1]
    reporter.series("ratio/sqrt_m_reference", ms.tolist(), np.sqrt(ms).tolist())
    reporter.table("error_summary", rows)
    return summary


# ------------------------------------------------------------------------------------------------
# 3. preprocessing load and randomness-generation time
# ------------------------------------------------------------------------------------------------
def _empty(m: int) -> list[np.ndarray]:
    return [np.zeros(0, dtype=np.int8) for _ in range(m)]


def load_and_time(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Load formulas vs ε and m; per-bit / per-multiplication costs measured, full runs timed within a budget."""
    cfg = LoadConfig.from_params(params)
    eps_list = sorted(cfg.eps_list)
    # -- closed-form counts -------------------------------------------------------------------
    count_rows = []
    for m in cfg.m_list:
        for mech in SHARED_MECHS:
            for eps in eps_list:
                ld = protocol_load(mech, m, eps, cfg.delta, cfg.k)
                count_rows.append({"m": m, "mechanism": mech, "ε": eps, **ld.as_dict()})
            lds = [protocol_load(mech, m, e, cfg.delta, cfg.k) for e in eps_list]
            reporter.series(f"mults/{mech}_m{m}", eps_list, [ld.multiplications for ld in lds])
            reporter.series(f"proofs/{mech}_m{m}", eps_list, [ld.bit_commitments for ld in lds])
            reporter.series(f"bytes/{mech}_m{m}", eps_list, [ld.bytes_provers for ld in lds])
    reporter.table("load_counts", count_rows)
    for mech in ("sn_vbm", "sn_vlm"):
        reporter.series(f"coins/{mech}", eps_list, [coin_count(mech, 1, e, cfg.delta, cfg.k) for e in eps_list])
    grid = np.geomspace(0.05, 4.0, 80)
    vbm = np.array([coin_count("sn_vbm", 1, e, cfg.delta, cfg.k) for e in grid])
    vlm = np.array([coin_count("sn_vlm", 1, e, cfg.delta, cfg.k) for e in grid])
    below = grid[vlm < vbm]
    crossover = float(below.max()) if len(below) else float("nan")
    ratio_01 = coin_count("sn_vbm", 1, 0.1, cfg.delta, cfg.k) / coin_count("sn_vlm", 1, 0.1, cfg.delta, cfg.k)
    reporter.log(
        f"SN-VLM needs fewer shared coins than SN-VBM for ε ≤ {crossover:.3g}; at ε=0.1 VBM/VLM = {ratio_01:.1f}"
    )
    # -- calibration: per committed bit and per multiplication, at every m --------------------
    t_bit, t_mult = [], []
    for i, m in enumerate(cfg.m_list):
        res = run_protocol("sn_vbm", m, _empty(m), 1.0, cfg.delta, n_coins=cfg.calib_coins)
        sec = {ph.name: ph.seconds for ph in res.phases}
        t_bit.append(sec["coins"] / (m * cfg.calib_coins))
        t_mult.append((sec["triples"] + sec["xor fold"]) / ((m - 1) * cfg.calib_coins))
        reporter.progress(0.1 * (i + 1) / len(cfg.m_list), f"calibrating m={m}")
    tb = float(np.mean(t_bit))
    ms_arr = np.array(cfg.m_list, dtype=float)
    if len(ms_arr) > 1:
        b, a = np.polyfit(ms_arr, t_mult, 1)  # t_mult(m) ≈ a + b·m (per-prover cost b)
    else:
        a, b = 0.0, t_mult[0] / ms_arr[0]
    reporter.table(
        "calibration",
        [
            {"m": m, "seconds per committed bit": tbm, "seconds per multiplication": tmm}
            for m, tbm, tmm in zip(cfg.m_list, t_bit, t_mult, strict=False)
        ],
    )

    def predict(mech: str, m: int, eps: float) -> float:
        ld = protocol_load(mech, m, eps, cfg.delta, cfg.k)
        return ld.bit_commitments * tb + ld.multiplications * (a + b * m)

    # -- measured full runs within the budget: cheapest remaining configuration of each mechanism in turn ----
    queues = {me: sorted((predict(me, m, e), m, e) for m in cfg.m_list for e in eps_list) for me in SHARED_MECHS}
    measured: dict[tuple[str, int, float], float] = {}
    t0 = time.perf_counter()
    stop = False
    while not stop and any(queues.values()):
        for mech in SHARED_MECHS:
            if not queues[mech]:
                continue
            pred, m, eps = queues[mech].pop(0)
            spent = time.perf_counter() - t0
            if pred > cfg.run_limit_s or spent + pred > cfg.budget_s:
                queues[mech] = []  # everything left in this queue is at least as expensive
                continue
            try:
                res = run_protocol(
                    mech, m, _empty(m), eps, cfg.delta, k=cfg.k, on_progress=lambda *_: reporter.check_stop()
                )
            except StopRequested:
                stop = True
                break
            assert res.accepted, res.failed_check
            measured[(mech, m, eps)] = res.seconds
            frac = min(1.0, (time.perf_counter() - t0) / max(cfg.budget_s, 1e-9))
            reporter.progress(0.1 + 0.9 * frac, f"{mech} m={m} ε={eps:g}: {res.seconds:.1f} s")
            if reporter.should_stop():
                stop = True
                break
    rows, fig_data = [], []
    dash = {"sn_vbm": "#1f77b4", "sn_vlm": "#d62728", "independent": "#2ca02c", "independent_laplace": "#9467bd"}
    for mech in SHARED_MECHS:
        for m in cfg.m_list:
            preds = [predict(mech, m, e) for e in eps_list]
            reporter.series(f"time_pred/{mech}_m{m}", eps_list, preds)
            me = [(e, measured[(mech, m, e)]) for e in eps_list if (mech, m, e) in measured]
            if me:
                reporter.series(f"time_measured/{mech}_m{m}", [x for x, _ in me], [y for _, y in me])
            for e, p in zip(eps_list, preds, strict=False):
                rows.append(
                    {
                        "mechanism": mech,
                        "m": m,
                        "ε": e,
                        "predicted s": p,
                        "measured s": measured.get((mech, m, e)),
                        "status": "measured" if (mech, m, e) in measured else "extrapolated",
                    }
                )
            fig_data.append(
                {
                    "type": "scatter",
                    "x": eps_list,
                    "y": preds,
                    "mode": "lines",
                    "name": f"{mech} m={m} (fit)",
                    "line": {"dash": "dash", "color": dash[mech]},
                    "legendgroup": f"{mech}{m}",
                }
            )
            if me:
                fig_data.append(
                    {
                        "type": "scatter",
                        "x": [x for x, _ in me],
                        "y": [y for _, y in me],
                        "mode": "lines+markers",
                        "name": f"{mech} m={m} (measured)",
                        "line": {"color": dash[mech]},
                        "legendgroup": f"{mech}{m}",
                    }
                )
    reporter.table("timing", rows)
    reporter.figure(
        "time_vs_eps",
        {
            "data": fig_data,
            "layout": {
                "xaxis": {"title": "ε", "type": "log"},
                "yaxis": {"title": "seconds (2 CPU cores)", "type": "log"},
                "title": "Generation time: measured (solid) vs fitted per-bit/per-multiplication cost (dashed)",
            },
        },
    )
    return {
        "crossover_eps": crossover,
        "coin_ratio_vbm_over_vlm_eps0.1": ratio_01,
        "seconds_per_bit": tb,
        "seconds_per_mult_intercept": float(a),
        "seconds_per_mult_per_prover": float(b),
        "measured_runs": len(measured),
    }


# ------------------------------------------------------------------------------------------------
# 4. privacy accounting
# ------------------------------------------------------------------------------------------------
def privacy_curves(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Exact δ(ε′) of Bin(n_b) and of the realized discrete Laplace at several k; coins required vs ε."""
    cfg = PrivacyConfig.from_params(params)
    n_b = acc.binom_coins(cfg.eps, cfg.delta)
    grid = np.geomspace(cfg.eps / 4, 2 * cfg.eps, cfg.n_grid)
    reporter.series("delta/binomial", grid.tolist(), [acc.binom_delta(n_b, e) for e in grid])
    pmf, _ = acc.realized_dlap(cfg.eps, None)
    reporter.series("delta/dlap_exact_digits", grid.tolist(), [acc.hockey_stick(pmf, e) for e in grid])
    rows = [
        {
            "noise": f"Bin({n_b}, ½) − {n_b // 2}",
            "coins": n_b,
            "sd": acc.binom_sd(n_b),
            "δ at target ε": acc.binom_delta(n_b, cfg.eps),
            "meets δ": acc.binom_delta(n_b, cfg.eps) <= cfg.delta,
        }
    ]
    L = acc.dlap_digits(cfg.eps)
    summary: dict[str, Any] = {"n_b": n_b, "L": L}
    for i, k in enumerate(cfg.k_list):
        pmf, off = acc.realized_dlap(cfg.eps, k)
        d = acc.hockey_stick(pmf, cfg.eps)
        reporter.series(f"delta/dlap_k{k}", grid.tolist(), [acc.hockey_stick(pmf, e) for e in grid])
        zs = np.arange(len(pmf)) - off
        rows.append(
            {
                "noise": f"realized DLap, L={L}, k={k}",
                "coins": 2 * L * k,
                "sd": float(np.sqrt(np.sum(pmf * zs**2))),
                "δ at target ε": d,
                "meets δ": d <= cfg.delta,
            }
        )
        summary[f"delta_dlap_k{k}"] = d
        reporter.progress((i + 1) / (len(cfg.k_list) + 1), f"k={k}: δ={d:.3g}")
    reporter.table("privacy", rows)
    eg = np.geomspace(0.05, 4.0, 40)
    reporter.series("coins/vbm_exact", eg.tolist(), [acc.binom_coins(e, cfg.delta) for e in eg])
    reporter.series("coins/odo_8ln", eg.tolist(), [acc.coins_odo(e, cfg.delta) for e in eg])
    reporter.series("coins/bc_100ln", eg.tolist(), [acc.coins_bc_plot(e, cfg.delta) for e in eg])
    for k in cfg.k_list:
        reporter.series(f"coins/vlm_k{k}", eg.tolist(), [2 * acc.dlap_digits(e) * k for e in eg])
    reporter.progress(1.0, "done")
    summary["delta_binomial"] = acc.binom_delta(n_b, cfg.eps)
    return summary

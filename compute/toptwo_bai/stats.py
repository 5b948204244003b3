"""Summaries of stopping times: quantiles, confidence intervals, Clopper-Pearson bands, Plotly ECDF/box figures."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import betaincinv


def clopper_pearson(errors: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial confidence interval for an error rate errors/n (Beta quantiles via ``betaincinv``)."""
    if n == 0:
        return 0.0, 1.0
    a = (1.0 - level) / 2.0
    lo = 0.0 if errors == 0 else float(betaincinv(errors, n - errors + 1, a))
    hi = 1.0 if errors == n else float(betaincinv(errors + 1, n - errors, 1.0 - a))
    return lo, hi


def tau_summary(tau: np.ndarray, correct: np.ndarray, t_max: int) -> dict[str, Any]:
    """Mean (95% normal CI), sd, 10/50/90% quantiles, error rate (Clopper-Pearson 95%) and censoring of τ.

    Censored runs (τ = −1) count as t_max in the moments (a lower bound) and are excluded from the error rate.
    """
    done = tau >= 0
    t = np.where(done, tau, t_max).astype(float)
    n = len(t)
    mean = float(t.mean()) if n else float("nan")
    sd = float(t.std(ddof=1)) if n > 1 else 0.0
    half = 1.96 * sd / np.sqrt(max(n, 1))
    errors = int(np.sum(done & ~correct))
    lo, hi = clopper_pearson(errors, int(done.sum()))
    q10, q50, q90 = (float(q) for q in np.quantile(t, [0.1, 0.5, 0.9])) if n else (np.nan,) * 3
    return {
        "mean": mean,
        "ci_low": mean - half,
        "ci_high": mean + half,
        "sd": sd,
        "q10": q10,
        "median": q50,
        "q90": q90,
        "errors": errors,
        "error_rate": errors / max(int(done.sum()), 1),
        "error_cp_low": lo,
        "error_cp_high": hi,
        "censored": int(n - done.sum()),
        "runs": n,
    }


def ecdf_trace(values: np.ndarray, name: str) -> dict[str, Any]:
    """A Plotly step trace of the empirical CDF of ``values``."""
    v = np.sort(np.asarray(values, dtype=float))
    return {
        "type": "scatter",
        "mode": "lines",
        "line": {"shape": "hv"},
        "name": name,
        "x": v.tolist(),
        "y": (np.arange(1, len(v) + 1) / max(len(v), 1)).tolist(),
    }


def ecdf_figure(groups: dict[str, np.ndarray], title: str, x_title: str = "τ", x_log: bool = True) -> dict[str, Any]:
    return {
        "data": [ecdf_trace(v, name) for name, v in groups.items()],
        "layout": {
            "title": title,
            "xaxis": {"title": x_title, "type": "log" if x_log else "linear"},
            "yaxis": {"title": "fraction of runs", "range": [0, 1]},
        },
    }


def box_figure(groups: dict[str, np.ndarray], title: str, y_title: str = "τ") -> dict[str, Any]:
    return {
        "data": [
            {"type": "box", "name": name, "y": np.asarray(v, dtype=float).tolist(), "boxpoints": "outliers"}
            for name, v in groups.items()
        ],
        "layout": {"title": title, "yaxis": {"title": y_title, "type": "log"}},
    }

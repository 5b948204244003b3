"""Summary statistics of the comparison: paired differences over seeds (hand-computed) and entropy stability."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from compute.stapo.run import entropy_stability, paired_differences


def _run(arm: str, seed: int, t10: float, t07: float) -> dict:
    return {"arm": arm, "seed": seed, "acc_t10": t10, "acc_t07": t07}


def test_paired_differences_by_hand() -> None:
    runs = [
        _run("STAPO", 0, 0.50, 0.70),
        _run("JustRL", 0, 0.40, 0.68),
        _run("STAPO", 1, 0.45, 0.66),
        _run("JustRL", 1, 0.47, 0.66),
        _run("STAPO", 2, 0.52, 0.71),
        _run("JustRL", 2, 0.46, 0.70),
        _run("GRPO", 0, 0.30, 0.60),  # seed 0 only: paired over one seed, CI 0
    ]
    rows = {r["arm"]: r for r in paired_differences(runs, ["justrl", "stapo", "grpo"])}
    j = rows["JustRL"]
    d = [0.10, -0.02, 0.06]  # STAPO − JustRL at T = 1 per seed
    half = stats.t.ppf(0.975, 2) * (sum((x - 0.14 / 3) ** 2 for x in d) / 2) ** 0.5 / math.sqrt(3)
    assert j["reference"] == "STAPO" and j["n"] == 3
    assert j["d_acc_t10"] == pytest.approx(0.14 / 3, abs=1e-12)
    assert j["d_acc_t10_ci"] == pytest.approx(half, rel=1e-9)
    assert j["d_acc_t07"] == pytest.approx((0.02 + 0.0 + 0.01) / 3, abs=1e-12)
    assert j["gap_t10_minus_t07"] == pytest.approx((0.08 - 0.02 + 0.05) / 3, abs=1e-12)
    assert (j["wins_t10"], j["wins_t07"]) == (2, 2)
    g = rows["GRPO"]
    assert g["n"] == 1 and g["d_acc_t10"] == pytest.approx(0.20) and g["d_acc_t10_ci"] == 0.0
    assert "STAPO" not in rows


def test_entropy_stability_on_a_known_curve() -> None:
    ent = [1.0] * 10 + [1.1] * 40 + [1.3] * 40 + [1.2] * 10  # 100 steps
    s = entropy_stability(ent)
    assert s["H_early"] == pytest.approx(1.0)
    assert s["H_dev_max"] == pytest.approx(0.3)  # max over the second half
    assert s["H_final_ratio"] == pytest.approx(1.2)  # mean of the last 10 steps

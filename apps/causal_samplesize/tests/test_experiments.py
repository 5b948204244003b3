"""Declarations validate, bad input names its field, every smoke preset runs and fills every panel."""

from __future__ import annotations

import pytest

from apps.causal_samplesize.experiments import EXPERIMENTS, PAPER
from apps.lab.declare import ValidationError, missing_panel_data
from compute.core.reporter import MemoryReporter

BY_SLUG = {e.slug: e for e in EXPERIMENTS}


def test_declarations() -> None:
    assert PAPER.slug == "causal_samplesize"
    assert set(BY_SLUG) == {"calculator", "precision_coverage", "kink_stress", "ratio_sensitivity"}
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and "paper headline" in e.presets


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("calculator", {"eps": 0.5}, "eps"),
        ("calculator", {"planning": [0.6, 0.35, 0.25, 0.25, 0.15, 0.5]}, "planning"),
        ("calculator", {"planning": [0.1, 0.35, 0.25, 0.25, 0.15, 0.35]}, "planning"),
        ("calculator", {"family": "MULTI", "xb": 1}, "xb"),
        ("calculator", {"confidence": 0.8}, "confidence"),
        ("precision_coverage", {"multipliers": [0.5, 2.0]}, "multipliers"),
        ("precision_coverage", {"joint": [0.5, 0.5]}, "joint"),
        ("precision_coverage", {"reps": 10}, "reps"),
        ("kink_stress", {"gaps": [0.5]}, "gaps"),
        ("ratio_sensitivity", {"p_xy": [0.0]}, "p_xy"),
    ],
)
def test_bad_input_names_the_field(slug: str, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        BY_SLUG[slug].validate(params)
    assert field in exc.value.errors


@pytest.mark.parametrize("slug", sorted(BY_SLUG))
def test_smoke_preset_runs_and_fills_panels(slug: str) -> None:
    e = BY_SLUG[slug]
    r = MemoryReporter()
    summary = e.run_local(e.presets["smoke"], r)
    assert summary
    assert missing_panel_data(e, r) == []


def test_calculator_reports_baseline_as_not_implemented_and_hand_value() -> None:
    e = BY_SLUG["calculator"]
    r = MemoryReporter()
    s = e.run_local({"side": "upper", "confidence": 0.95}, r)
    assert s["n_baseline"] == "not implemented"
    assert s["n_distribution_free"] == 1153  # ⌈3·1.959964²/(4·0.05²)⌉
    assert any("not implemented" in str(row.get("formula")) for row in r.tables["designs"]["rows"])


def test_user_joint_and_total_basis() -> None:
    e = BY_SLUG["precision_coverage"]
    r = MemoryReporter()
    joint = [0.1, 0.05, 0.2, 0.15, 0.1, 0.2, 0.1, 0.1]
    s = e.run_local({**e.presets["smoke"], "joint": joint, "use_baseline": False}, r)
    assert len(r.tables["per_truth"]["rows"]) == 4  # one truth × four rules
    assert s["distribution_free_mean_n"] == 1153  # upper PNS endpoint, ⌈3z²/(4ε²)⌉
    calc = BY_SLUG["calculator"]
    r1, r2 = MemoryReporter(), MemoryReporter()
    s1 = calc.run_local({"side": "upper", "basis": "per_arm", "ratio": 1.0}, r1)
    s2 = calc.run_local({"side": "upper", "basis": "total", "ratio": 0.5}, r2)
    # n_o = 0.5 × (n_e total) = n_e per arm: the same design written two ways
    assert s1["n_distribution_free"] == s2["n_distribution_free"]
    assert s1["n_o_distribution_free"] == s2["n_o_distribution_free"]


def test_user_entered_baseline_design_gives_measured_ratios() -> None:
    # arbitrary test sizes (NOT the paper's): the ratio is the baseline's units over the rule's, computed exactly
    calc = BY_SLUG["calculator"]
    r = MemoryReporter()
    s = calc.run_local({"side": "upper", "baseline_n_e": 2000, "baseline_n_o": 2000}, r)
    assert s["n_baseline"] == 2000
    # distribution-free upper PNS: 1153 per arm + 1153 observational → 3·1153 units; baseline 2·2000 + 2000
    assert s["ratio_baseline_to_distribution_free"] == pytest.approx(6000 / (3 * 1153))
    # the same two designs written with n_e as the experimental total (n_o = 0.5 × n_e total = n_e per arm)
    s2 = calc.run_local(
        {"side": "upper", "basis": "total", "ratio": 0.5, "baseline_n_e": 4000, "baseline_n_o": 2000}, MemoryReporter()
    )
    assert s2["ratio_baseline_to_distribution_free"] == pytest.approx(s["ratio_baseline_to_distribution_free"])
    assert {row["rule"] for row in r.tables["baseline_ratio"]["rows"]} >= {"distribution-free (Popoviciu)"}
    with pytest.raises(ValidationError) as exc:
        calc.validate({"baseline_n_e": 100})
    assert "baseline_n_o" in exc.value.errors
    sim = BY_SLUG["precision_coverage"]
    r = MemoryReporter()
    s = sim.run_local({**sim.presets["smoke"], "baseline_n_e": 3000, "baseline_n_o": 3000}, r)
    assert s["baseline_mean_n"] == 3000
    assert s["ratio_baseline_to_distribution_free"] == pytest.approx(9000 / (3 * 1153))
    assert len(r.tables["per_truth"]["rows"]) == 2 * 5  # two truths × (four rules + the baseline)

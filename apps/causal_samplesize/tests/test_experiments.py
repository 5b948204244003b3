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

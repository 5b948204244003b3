"""Declarations validate, bad input names its field, every smoke preset runs and fills every panel."""

from __future__ import annotations

import json

import pytest

from apps.lab.declare import ValidationError, missing_panel_data
from apps.toptwo_bai.experiments import EXPERIMENTS, PAPER
from compute.core.reporter import MemoryReporter

BY_SLUG = {e.slug: e for e in EXPERIMENTS}


def test_declarations() -> None:
    assert PAPER.slug == "toptwo_bai"
    assert set(BY_SLUG) == {"live_run", "stopping_time", "sampler_comparison", "diagnostics", "forced_exploration"}
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and "paper headline" in e.presets
        assert e.compute.startswith("compute.toptwo_bai.run:")
        e.load()  # the entry point exists


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("live_run", {"beta": 0.99}, "beta"),
        ("live_run", {"delta": 0.5}, "delta"),
        ("live_run", {"instance": "custom", "arm_means": [0.5, 0.5, 0.4]}, "arm_means"),
        ("live_run", {"arm_means": [0.5]}, "arm_means"),
        ("live_run", {"arm_means": [0.5, 1.2]}, "arm_means"),
        ("live_run", {"n_runs": 10, "tracked_run": 10}, "tracked_run"),
        ("live_run", {"selection": "greedy"}, "selection"),
        ("live_run", {"instance": "mu3"}, "instance"),
        ("live_run", {"bogus": 1}, "bogus"),
        ("stopping_time", {"deltas": [0.5, 0.1]}, "deltas"),
        ("stopping_time", {"n_runs": 5000}, "n_runs"),
        ("sampler_comparison", {"threshold": "exact"}, "threshold"),
        ("diagnostics", {"horizon": 10}, "horizon"),
        ("forced_exploration", {"second_instance": "custom", "arm_means": [0.3, 0.3]}, "arm_means"),
    ],
)
def test_bad_input_names_the_field(slug: str, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        BY_SLUG[slug].validate(params)
    assert field in exc.value.errors


def test_equal_suboptimal_means_are_allowed() -> None:
    BY_SLUG["live_run"].validate({"instance": "custom", "arm_means": [0.5, 0.4, 0.4, 0.4]})


@pytest.mark.parametrize("slug", sorted(BY_SLUG))
def test_smoke_preset_runs_and_fills_panels(slug: str) -> None:
    e = BY_SLUG[slug]
    r = MemoryReporter()
    summary = e.run_local(e.presets["smoke"], r)
    assert summary
    json.dumps(summary, allow_nan=False)  # storable as JSON/JSONB (no NaN)
    assert missing_panel_data(e, r) == []
    assert r.progress_log and r.progress_log[-1][0] == pytest.approx(1.0)


def test_live_run_streams_steadily_and_stops_on_cancel() -> None:
    e = BY_SLUG["live_run"]
    r = MemoryReporter()
    e.run_local(e.presets["smoke"], r)
    steps = r.steps("runs/stopped_fraction")
    assert len(steps) >= 10  # one dashboard update every report_every steps
    assert all(b - a <= e.presets["smoke"]["report_every"] for a, b in zip(steps, steps[1:-1], strict=False))
    assert sorted(r.values("stop/tau")) == sorted(set(r.values("stop/tau"))) or len(r.values("stop/tau")) == 100
    cancelled = MemoryReporter(stop_after=1)
    summary = e.run_local(e.presets["smoke"], cancelled)
    assert summary["steps"] < 600  # stopped at the second check (every 256 steps)

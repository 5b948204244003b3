"""Declarations validate, bad input names its field, every smoke preset runs and fills every panel."""

from __future__ import annotations

import pytest

from apps.lab.declare import ValidationError, missing_panel_data
from apps.scenefactory.experiments import EXPERIMENTS, PAPER
from compute.core.reporter import MemoryReporter

BY_SLUG = {e.slug: e for e in EXPERIMENTS}


def test_declarations() -> None:
    assert PAPER.slug == "scenefactory"
    assert set(BY_SLUG) == {"throughput", "ppo_goal", "transfer", "wet_road"}
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and "paper headline" in e.presets
        assert e.compute.startswith("compute.scenefactory.run:")
        e.load()


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("throughput", {"worlds": [0]}, "worlds"),
        ("throughput", {"worlds": [2048]}, "worlds"),
        ("throughput", {"backend": "physx"}, "backend"),
        ("ppo_goal", {"n_agents": 64}, "n_agents"),
        ("ppo_goal", {"wet_fraction": 1.5}, "wet_fraction"),
        ("ppo_goal", {"scenes": "highway"}, "scenes"),
        ("transfer", {"kinematic_backend": "physx"}, "kinematic_backend"),
        ("transfer", {"iterations": 0}, "iterations"),
        ("wet_road", {"depths": [-1.0]}, "depths"),
        ("wet_road", {"bogus": 1}, "bogus"),
    ],
)
def test_bad_input_names_the_field(slug: str, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        BY_SLUG[slug].validate(params)
    assert field in exc.value.errors


@pytest.mark.parametrize("slug", sorted(BY_SLUG))
def test_smoke_preset_runs_and_fills_panels(slug: str, tmp_path) -> None:
    e = BY_SLUG[slug]
    r = MemoryReporter(data_dir=tmp_path)
    summary = e.run_local(e.presets["smoke"], r)
    assert summary
    assert missing_panel_data(e, r) == []
    assert r.progress_log and r.progress_log[-1][0] == pytest.approx(1.0)

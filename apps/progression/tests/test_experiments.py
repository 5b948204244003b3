"""Declarations validate, bad input names its field, every smoke preset runs and fills every panel."""

from __future__ import annotations

import pytest
import torch

from apps.lab.declare import ValidationError, missing_panel_data
from apps.progression.experiments import EXPERIMENTS, PAPER
from compute.core.reporter import MemoryReporter
from compute.progression.config import StepConfig

BY_SLUG = {e.slug: e for e in EXPERIMENTS}
torch.set_num_threads(1)


def test_declarations_mirror_the_config() -> None:
    assert PAPER.slug == "progression" and PAPER.arxiv == "2605.31061"
    assert set(BY_SLUG) == {"rul", "compass", "forecasting", "phases"}
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and len(e.presets) >= 2
        assert e.compute.startswith("compute.progression.run:")
        e.load()
        StepConfig.from_params({**e.defaults(), "seed": 0, "device": "cpu"})  # every parameter is a config field


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("rul", {"n_units": 5}, "n_units"),
        ("rul", {"z_dim": 1}, "z_dim"),
        ("rul", {"beta": 1.5}, "beta"),
        ("rul", {"grouping": "labels"}, "grouping"),
        ("rul", {"source": "cmapss"}, "source"),
        ("rul", {"n_seeds": 11}, "n_seeds"),
        ("compass", {"source": "fd_all"}, "source"),
        ("forecasting", {"max_horizon": 100}, "max_horizon"),
        ("phases", {"k_max": 9}, "k_max"),
        ("phases", {"bogus": 1}, "bogus"),
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
    assert r.progress_log and r.progress_log[-1][0] == pytest.approx(1.0)

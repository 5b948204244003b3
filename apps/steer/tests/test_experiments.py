"""Declarations validate, bad input names its field, every smoke preset runs and fills every panel."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.lab.declare import ValidationError, missing_panel_data
from apps.steer.experiments import EXPERIMENTS, PAPER
from compute.core.reporter import MemoryReporter

BY_SLUG = {e.slug: e for e in EXPERIMENTS}


def test_declarations() -> None:
    assert PAPER.slug == "steer"
    assert set(BY_SLUG) == {"sft_build", "route_rl", "pareto"}
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and "paper headline" in e.presets


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("route_rl", {"method": "ppo"}, "method"),
        ("route_rl", {"beta": 0.9}, "beta"),
        ("route_rl", {"lam": 0.5}, "lam"),
        ("route_rl", {"oracle_tiers": "hard,extreme"}, "oracle_tiers"),
        ("route_rl", {"max_new": 32}, "max_new"),
        ("pareto", {"methods": "steer,ppo"}, "methods"),
        ("pareto", {"lams": "0,abc"}, "lams"),
    ],
)
def test_bad_input_names_the_field(slug: str, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        BY_SLUG[slug].validate(params)
    assert field in exc.value.errors


def test_smoke_presets_run_and_fill_every_panel(tmp_path: Path) -> None:
    import torch

    torch.set_num_threads(1)
    for e in EXPERIMENTS:
        rep = MemoryReporter(data_dir=tmp_path)
        summary = e.run_local(e.presets["smoke"], rep)
        assert summary, e.slug
        assert missing_panel_data(e, rep) == [], e.slug

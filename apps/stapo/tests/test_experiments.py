"""Declarations validate, bad input names its field, every smoke preset runs and fills every panel."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.lab.declare import ValidationError, missing_panel_data
from apps.stapo.experiments import EXPERIMENTS, PAPER
from compute.core.reporter import MemoryReporter

BY_SLUG = {e.slug: e for e in EXPERIMENTS}


def test_declarations() -> None:
    assert PAPER.slug == "stapo"
    assert set(BY_SLUG) == {"train", "compare"}
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and "paper headline" in e.presets


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("train", {"arm": "ppo"}, "arm"),
        ("train", {"tau_p": 0.5}, "tau_p"),
        ("train", {"q": 0.3}, "q"),
        ("train", {"min_digits": 4, "max_digits": 2}, "max_digits"),
        ("compare", {"arms": "stapo,ppo"}, "arms"),
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

"""Declarations validate, bad input names its field, every smoke preset runs and fills every panel."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.lab.declare import ValidationError, missing_panel_data
from apps.stare.experiments import EXPERIMENTS, PAPER
from compute.core.reporter import MemoryReporter

BY_SLUG = {e.slug: e for e in EXPERIMENTS}


def test_declarations() -> None:
    assert PAPER.slug == "stare"
    assert set(BY_SLUG) == {"train", "compare"}
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and "paper headline" in e.presets


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("train", {"method": "ppo"}, "method"),
        ("train", {"frac": 0.9}, "frac"),
        ("train", {"w_pos": 1.8, "w_max": 1.5}, "w_pos"),
        ("train", {"m_neg": 0.6, "m_min": 0.7}, "m_neg"),
        ("compare", {"methods": "some"}, "methods"),
        ("compare", {"min_digits": 4, "max_digits": 2}, "max_digits"),
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

"""Declarations validate, bad input names its field, every smoke preset runs and fills every panel."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.grpo_core.experiments import EXPERIMENTS, PAPER
from apps.lab.declare import ValidationError, missing_panel_data
from compute.core.reporter import MemoryReporter

BY_SLUG = {e.slug: e for e in EXPERIMENTS}


def test_declarations() -> None:
    assert PAPER.slug == "grpo_core"
    assert set(BY_SLUG) == {"sft_build", "grpo_run", "sampling_benchmark"}
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and "paper headline" in e.presets


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("grpo_run", {"group_size": 1}, "group_size"),
        ("grpo_run", {"estimator": "ppo"}, "estimator"),
        ("grpo_run", {"min_digits": 4, "max_digits": 2}, "max_digits"),
        ("grpo_run", {"n_eval": 900}, "n_eval"),
        ("sft_build", {"sft_tokens": 10}, "sft_tokens"),
        ("sampling_benchmark", {"lengths": [1000]}, "lengths"),
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
    # the GRPO smoke reused the checkpoint the SFT smoke built (same config → same hash)
    assert len(list((tmp_path / "grpo_core").glob("sft-*.pt"))) == 1

"""The modular_control declarations: validity, rejected input with the field named, smoke runs fill every panel."""

from __future__ import annotations

import pytest
import torch

from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from apps.modular_control.experiments import EXPERIMENTS, PAPER, TRAIN, ZERO_SHOT
from compute.core.reporter import MemoryReporter

torch.set_num_threads(1)


def test_declarations() -> None:
    assert PAPER.slug == "modular_control"
    assert [e.slug for e in EXPERIMENTS] == ["train", "zero_shot", "context_probe", "ablation"]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert e.compute.startswith("compute.modular_control.run:")
        assert callable(e.load())


@pytest.mark.parametrize(
    ("experiment", "params", "field"),
    [
        (TRAIN, {"arch": "gpt"}, "arch"),
        (TRAIN, {"families": "ant"}, "families"),
        (TRAIN, {"steps": 10}, "steps"),
        (TRAIN, {"bptt": 0}, "bptt"),
        (TRAIN, {"bogus": 1}, "bogus"),
        (ZERO_SHOT, {"n_seeds": 9}, "n_seeds"),
        (ZERO_SHOT, {"scale_grid": [0.01]}, "scale_grid"),
        (ZERO_SHOT, {"scale_grid": [1.0]}, "scale_grid"),  # cross-field: a curve needs two scales
    ],
)
def test_bad_input_names_the_field(experiment: Experiment, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        experiment.validate(params)
    assert field in exc.value.errors


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.slug)
def test_smoke_preset_fills_every_panel(experiment: Experiment, tmp_path) -> None:
    rep = MemoryReporter(data_dir=tmp_path)
    summary = experiment.run_local(experiment.presets["smoke"], rep)
    assert summary and "cancelled" not in summary
    assert missing_panel_data(experiment, rep) == []

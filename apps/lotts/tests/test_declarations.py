"""The lotts declarations: validity, rejected input with the field named, smoke runs fill every panel."""

from __future__ import annotations

import pytest
import torch

from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from apps.lotts.experiments import EXPERIMENTS, PAPER, QUALITY, SENSITIVITY
from compute.core.reporter import MemoryReporter

torch.set_num_threads(1)  # one thread, as the lab runner does (the machine is shared)


def test_declarations() -> None:
    assert PAPER.slug == "lotts"
    assert [e.slug for e in EXPERIMENTS] == ["build_world", "quality_vs_nfe", "localization", "sensitivity"]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert e.compute.startswith("compute.lotts.run:")
        assert callable(e.load())


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"r": 0.9}, "r"),
        ({"t0_frac": 0.0}, "t0_frac"),
        ({"bon_n": [0, 2]}, "bon_n"),
        ({"size": 24}, "size"),
        ({"depth": 4}, "depth"),
        ({"bogus": 1}, "bogus"),
        ({"n_prompts": 64, "bon_n": [32, 2], "steps": 50}, "n_prompts"),  # cross-field: budget
    ],
)
def test_bad_quality_input_names_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        QUALITY.validate(params)
    assert field in exc.value.errors


def test_sensitivity_needs_two_knobs() -> None:
    with pytest.raises(ValidationError) as exc:
        SENSITIVITY.validate({"grid_x": "r", "grid_y": "r"})
    assert "grid_y" in exc.value.errors


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.slug)
def test_smoke_preset_fills_every_panel(experiment: Experiment, tmp_path_factory: pytest.TempPathFactory) -> None:
    rep = MemoryReporter(data_dir=tmp_path_factory.getbasetemp() / "lotts-data")
    summary = experiment.run_local(experiment.presets["smoke"], rep)
    assert summary
    assert missing_panel_data(experiment, rep) == []


def test_smoke_quality_counts_nfe_and_keeps_the_outside() -> None:
    rep = MemoryReporter(data_dir="/tmp/paperlab-lotts-smoke")
    summary = QUALITY.run_local(QUALITY.presets["smoke"], rep)
    counter = {r["operation"]: r["NFE"] for r in rep.tables["nfe_counter"]["rows"]}
    assert counter["one candidate (S·CFG)"] == 2 * 6  # 6 DDIM steps × CFG 2
    # LoTTS k=1 = one candidate + localization 2·n_t + b·CFG·(restart steps + h_hol)
    restart = len([t for t in range(0, 1000, 1000 // 6) if t <= 500])
    assert counter["LoTTS k=1"] == 12 + 2 * 2 + 2 * 2 * (restart + 2)
    assert summary["max_change_outside_mask_pre_holistic"] == 0.0

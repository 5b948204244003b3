"""The ssdg_explainer declarations: validity, rejected input with the field named, smoke runs fill every panel."""

from __future__ import annotations

import pytest
import torch

from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from apps.ssdg_explainer.experiments import EXPERIMENTS, EXPLAIN, PAPER
from compute.core.reporter import MemoryReporter

torch.set_num_threads(1)


def test_declarations() -> None:
    assert PAPER.slug == "ssdg_explainer"
    assert [e.slug for e in EXPERIMENTS] == ["build_gnn", "explain_dataset", "ood_analysis", "ablation", "robustness"]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert callable(e.load())


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"dataset": "mutag"}, "dataset"),
        ({"n_seeds": 9}, "n_seeds"),
        ({"gate": 0.2}, "gate"),
        ({"bogus": 1}, "bogus"),
        ({"n_graphs": 100, "n_explain": 200}, "n_explain"),
        (
            {
                f"m_{m}": False
                for m in ["random", "degree", "grad", "gnnexplainer", "pgexplainer", "mixup", "proxy", "ssdg"]
            },
            "m_ssdg",
        ),
    ],
)
def test_bad_input_names_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        EXPLAIN.validate(params)
    assert field in exc.value.errors


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.slug)
def test_smoke_preset_fills_every_panel(experiment: Experiment, tmp_path) -> None:
    rep = MemoryReporter(data_dir=tmp_path)
    summary = experiment.run_local(experiment.presets["smoke"], rep)
    assert summary
    assert missing_panel_data(experiment, rep) == []

"""svd_sparsity declarations: validity, rejected input names the field, smoke runs fill every panel."""

from __future__ import annotations

import pytest

from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from apps.svd_sparsity.experiments import CALIBRATION, EXPERIMENTS, PAPER, PREDICTOR, SPEED
from compute.core.reporter import MemoryReporter


def test_declarations() -> None:
    assert PAPER.slug == "svd_sparsity"
    assert [e.slug for e in EXPERIMENTS] == [
        "build_model",
        "predictor_quality",
        "calibration_quality",
        "decode_speed",
        "baselines",
    ]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert callable(e.load())


@pytest.mark.parametrize(
    ("experiment", "params", "field"),
    [
        (PREDICTOR, {"ranks": [2, 8]}, "ranks"),
        (PREDICTOR, {"target_recall": 1.5}, "target_recall"),
        (PREDICTOR, {"model": "huge"}, "model"),
        (CALIBRATION, {"target_recalls": []}, "target_recalls"),
        (CALIBRATION, {"granularity": "head"}, "granularity"),
        (SPEED, {"d": 100}, "d"),
        (SPEED, {"d": 256, "d_ff": 128}, "d_ff"),
        (SPEED, {"d": 256, "rank": 512}, "rank"),
        (SPEED, {"threads": 4}, "threads"),
        (SPEED, {"bogus": 1}, "bogus"),
    ],
)
def test_bad_input_names_the_field(experiment: Experiment, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        experiment.validate(params)
    assert field in exc.value.errors


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("svd_sparsity")  # the micro model is built once (the build step)


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.slug)
def test_smoke_preset_fills_every_panel(experiment: Experiment, data_dir) -> None:
    rep = MemoryReporter(data_dir=data_dir)
    summary = experiment.run_local(experiment.presets["smoke"], rep)
    assert summary
    assert missing_panel_data(experiment, rep) == []
    if experiment.slug == "calibration_quality":
        assert summary["oracle_ppl_ratio"] == pytest.approx(1.0, abs=1e-5)  # the oracle mask is exact
    if experiment.slug == "predictor_quality":
        assert summary["white_loss_never_larger"]

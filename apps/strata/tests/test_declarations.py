"""The strata declarations: validity, rejected input with the field named, smoke runs fill every panel."""

from __future__ import annotations

import pytest

from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from apps.strata.experiments import EXPERIMENTS, PAPER, ROLLOUT, TRAIN
from compute.core.reporter import MemoryReporter


def test_declarations() -> None:
    assert PAPER.slug == "strata"
    assert [e.slug for e in EXPERIMENTS] == ["generate_data", "train_tiles", "global_rollout", "iso_flop"]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert callable(e.load())


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"nlat": 48}, "nlat"),
        ({"rope": "sinusoidal"}, "rope"),
        ({"dt": 700.0}, "dt"),
        ({"dt": 420.0}, "dt"),  # does not divide 600 s
        ({"width": 40}, "width"),
        ({"tile": 64}, "tile"),  # larger than 32 latitudes
        ({"tile": 16, "patch": 5}, "patch"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_input_names_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        TRAIN.validate(params)
    assert field in exc.value.errors


def test_overlap_must_be_below_half_a_tile() -> None:
    with pytest.raises(ValidationError) as exc:
        ROLLOUT.validate({"overlap": 8, "tile": 16})
    assert "overlap" in exc.value.errors


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("strata")  # shared: the smoke data set is generated once (the build step)


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.slug)
def test_smoke_preset_fills_every_panel(experiment: Experiment, data_dir) -> None:
    rep = MemoryReporter(data_dir=data_dir)
    summary = experiment.run_local(experiment.presets["smoke"], rep)
    assert summary
    assert missing_panel_data(experiment, rep) == []
    if experiment is ROLLOUT:
        assert summary["finite"] and summary["steps"] == 6
        assert 0.5 < summary["seam_blended"] < 2.0

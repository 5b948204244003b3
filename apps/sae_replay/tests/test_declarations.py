"""The sae_replay declarations: validity, rejected input with the field named, smoke runs fill every panel."""

from __future__ import annotations

import pytest

from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from apps.sae_replay.experiments import EXPERIMENTS, PAPER, SCALING, SWEEP
from compute.core.reporter import MemoryReporter


def test_declarations() -> None:
    assert PAPER.slug == "sae_replay"
    assert [e.slug for e in EXPERIMENTS] == [
        "replay_sweep",
        "scaling_fit",
        "robustness",
        "interpretability",
        "cache_build",
    ]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert e.compute.startswith("compute.sae_replay.run:")
        assert callable(e.load())


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"arch": "relu"}, "arch"),
        ({"k": 0}, "k"),
        ({"t_log2": 30}, "t_log2"),
        ({"r_list": [3]}, "r_list"),  # must divide T
        ({"r_list": [1024], "t_log2": 14}, "r_list"),  # pool smaller than a batch
        ({"k": 600}, "k"),  # k ≥ m
        ({"source": "minilm", "t_log2": 18, "cache_tokens_log2": 17}, "t_log2"),  # fresh arm needs T ≤ cache
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_sweep_input_names_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        SWEEP.validate(params)
    assert field in exc.value.errors


def test_bad_scaling_input_names_the_field() -> None:
    with pytest.raises(ValidationError) as exc:
        SCALING.validate({"r_list": [1, 2]})
    assert "r_list" in exc.value.errors


@pytest.mark.parametrize("experiment", EXPERIMENTS[:4], ids=lambda e: e.slug)
def test_smoke_preset_fills_every_panel(experiment: Experiment) -> None:
    rep = MemoryReporter()
    summary = experiment.run_local(experiment.presets["smoke"], rep)
    assert summary
    assert missing_panel_data(experiment, rep) == []


def test_cancel_returns_a_partial_summary() -> None:
    rep = MemoryReporter(stop_after=0)
    summary = SWEEP.run_local(SWEEP.presets["smoke"], rep)
    assert summary["cancelled"] is True


def test_cache_build_smoke(tmp_path) -> None:
    rep = MemoryReporter(data_dir=tmp_path)
    cache = EXPERIMENTS[4]
    summary = cache.run_local(cache.presets["smoke"], rep)
    assert summary["train_tokens"] == 512 and summary["documents_deduplicated"] == 2125  # 2,225 minus 100 duplicates
    assert missing_panel_data(cache, rep) == []

"""The prefixshakeup declarations: validity, rejected input with the field named, smoke runs fill every panel."""

from __future__ import annotations

import pytest

from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from apps.prefixshakeup.experiments import CAPACITY, ENGINE, EXPERIMENTS, PAPER, TRADEOFF
from compute.core.reporter import MemoryReporter


def test_declarations() -> None:
    assert PAPER.slug == "prefixshakeup"
    assert [e.slug for e in EXPERIMENTS] == [
        "capacity_sweep",
        "accuracy_tradeoff",
        "incremental_updates",
        "engine_validation",
        "planning_cost",
        "build_tagger",
    ]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert e.compute.startswith("compute.prefixshakeup.run:")
        assert callable(e.load())


@pytest.mark.parametrize(
    ("experiment", "params", "field"),
    [
        (CAPACITY, {"zipf_alpha": 2.0}, "zipf_alpha"),
        (CAPACITY, {"capacities": [-5]}, "capacities"),
        (CAPACITY, {"page_size": 8}, "page_size"),
        (CAPACITY, {"users": 2000, "records_mean": 300}, "users"),  # cross-field: too large
        (TRADEOFF, {"variant": "drop"}, "variant"),
        (TRADEOFF, {"d_list": []}, "d_list"),
        (ENGINE, {"model": "gpt2"}, "model"),
        (ENGINE, {"bogus": 1}, "bogus"),
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
    assert summary
    assert missing_panel_data(experiment, rep) == []


def test_smoke_capacity_orders_the_policies(tmp_path) -> None:
    rep = MemoryReporter(data_dir=tmp_path)
    CAPACITY.run_local(CAPACITY.presets["smoke"], rep)
    rows = {(r["capacity"], r["policy"]): r for r in rep.tables["summary"]["rows"]}
    for cap in (1000, "∞"):  # re-formed prompts never share less than the original order on this workload
        assert rows[(cap, "shakeup_d4")]["phr"] >= rows[(cap, "lpm")]["phr"] >= 0
        assert rows[(cap, "no_cache")]["phr"] == 0

"""The verifiable_dp declarations: validity, rejected input with the field named, smoke runs fill every panel."""

from __future__ import annotations

import pytest

from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from apps.verifiable_dp.experiments import EXPERIMENTS, PAPER, PROTOCOL
from compute.core.reporter import MemoryReporter


def test_declarations() -> None:
    assert PAPER.slug == "verifiable_dp"
    assert [e.slug for e in EXPERIMENTS] == ["protocol_run", "error_vs_provers", "load_and_time", "privacy_curves"]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert e.compute.startswith("compute.verifiable_dp.run:")
        assert callable(e.load())


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"m": 9}, "m"),
        ({"mechanism": "laplace"}, "mechanism"),
        ({"eps": 0.01}, "eps"),
        ({"delta": 0.1}, "delta"),
        ({"cheat": "bribe"}, "cheat"),
        ({"bogus": 1}, "bogus"),
        ({"m": 8, "eps": 0.05, "mechanism": "sn_vbm"}, "eps"),  # cross-field: far too expensive
    ],
)
def test_bad_protocol_input_names_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        PROTOCOL.validate(params)
    assert field in exc.value.errors


def test_bad_list_input_is_rejected() -> None:
    with pytest.raises(ValidationError) as exc:
        EXPERIMENTS[2].validate({"m_list": [1, 3]})
    assert "m_list" in exc.value.errors


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.slug)
def test_smoke_preset_fills_every_panel(experiment: Experiment) -> None:
    rep = MemoryReporter()
    summary = experiment.run_local(experiment.presets["smoke"], rep)
    assert summary
    assert missing_panel_data(experiment, rep) == []


def test_smoke_protocol_run_is_accepted() -> None:
    rep = MemoryReporter()
    summary = PROTOCOL.run_local(PROTOCOL.presets["smoke"], rep)
    assert summary["honest_accepted"] == summary["honest_runs"] == 1
    assert rep.tables["checklist"]["rows"] and all(r["status"] == "pass" for r in rep.tables["checklist"]["rows"])


def test_cancel_returns_a_partial_summary() -> None:
    rep = MemoryReporter(stop_after=0)  # the first check_stop inside the protocol cancels
    summary = PROTOCOL.run_local({"m": 2, "eps": 4.0, "records_per_prover": 10, "coins_override": 40}, rep)
    assert summary == {"cancelled": True}

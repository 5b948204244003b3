"""The spell declarations: validity, rejected input with the field named, smoke runs fill every panel."""

from __future__ import annotations

import pytest

from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from apps.spell.experiments import CONTEXT_EXP, EXPERIMENTS, FUZZ_EXP, GAMES_EXP, GSM_EXP, PAPER
from compute.core.reporter import MemoryReporter


def test_declarations() -> None:
    assert PAPER.slug == "spell"
    assert [e.slug for e in EXPERIMENTS] == ["games", "context_budget", "gsm_calculator", "replay_fuzz"]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert e.compute.startswith("compute.spell.run:") and callable(e.load())


@pytest.mark.parametrize(
    ("experiment", "params", "field"),
    [
        (GAMES_EXP, {"game": "chess"}, "game"),
        (GAMES_EXP, {"max_depth": 2}, "max_depth"),
        (GAMES_EXP, {"backend": "endpoint"}, "base_url"),  # cross-field: endpoint needs a URL
        (CONTEXT_EXP, {"n_files": 100}, "n_files"),
        (CONTEXT_EXP, {"budget": 100}, "budget"),
        (FUZZ_EXP, {"n_programs": 9}, "n_programs"),
        (FUZZ_EXP, {"bogus": 1}, "bogus"),
        (GSM_EXP, {"n_problems": 5}, "n_problems"),
        (GSM_EXP, {"backend": "endpoint"}, "base_url"),
    ],
)
def test_bad_input_names_the_field(experiment: Experiment, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        experiment.validate(params)
    assert field in exc.value.errors


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.slug)
def test_smoke_preset_fills_every_panel(experiment: Experiment) -> None:
    rep = MemoryReporter()
    summary = experiment.run_local(experiment.presets["smoke"], rep)
    assert summary
    assert missing_panel_data(experiment, rep) == []


def test_smoke_games_solve_everything_without_replays() -> None:
    rep = MemoryReporter()
    s = GAMES_EXP.run_local(GAMES_EXP.presets["smoke"], rep)
    assert s["success_rate"] == 1.0 and s["replays"] == 0 and s["runs"] == 5
    assert all(r["status"] == "pass" for r in rep.tables["checks"]["rows"])


def test_cancel_returns_a_partial_summary() -> None:
    rep = MemoryReporter(stop_after=1)
    s = GAMES_EXP.run_local({"repeats": 1}, rep)
    assert s["partial"] and s["runs"] < 5

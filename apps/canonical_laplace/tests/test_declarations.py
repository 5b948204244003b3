"""canonical_laplace declarations: validity, rejected input names the field, smoke runs fill every panel."""

from __future__ import annotations

import pytest
import torch

from apps.canonical_laplace.experiments import EXPERIMENTS, INVARIANCE, PAPER
from apps.lab.declare import Experiment, ValidationError, missing_panel_data
from compute.core.reporter import MemoryReporter


def test_declarations() -> None:
    assert PAPER.slug == "canonical_laplace"
    assert [e.slug for e in EXPERIMENTS] == ["invariance", "landscape", "heldout"]
    for e in EXPERIMENTS:
        assert {"smoke", "paper headline"} <= set(e.presets)
        assert callable(e.load())


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"n_rescalings": 1}, "n_rescalings"),
        ({"gamma": 1.5}, "gamma"),
        ({"dataset": "mnist"}, "dataset"),
        ({"hidden": "7"}, "hidden"),
        ({"bogus": 1}, "bogus"),
        ({"curvature": "hessian", "hidden": "128-128"}, "curvature"),  # cross-field: P too large for a Hessian
        ({"gap": True, "dataset": "moons"}, "gap"),
    ],
)
def test_bad_input_names_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        INVARIANCE.validate(params)
    assert field in exc.value.errors


@pytest.mark.parametrize("experiment", EXPERIMENTS[1:], ids=lambda e: e.slug)
def test_smoke_preset_fills_every_panel(experiment: Experiment) -> None:
    torch.set_num_threads(1)
    rep = MemoryReporter()
    summary = experiment.run_local(experiment.presets["smoke"], rep)
    assert summary
    assert missing_panel_data(experiment, rep) == []


def test_smoke_invariance_fills_every_panel_and_shows_the_claim() -> None:
    torch.set_num_threads(1)
    rep = MemoryReporter()
    s = INVARIANCE.run_local(INVARIANCE.presets["smoke"], rep)
    assert missing_panel_data(INVARIANCE, rep) == []
    assert s["n_representatives"] == 3
    # canonical: invariant to float64 round-off (≤ 1e-8 relative), for the selected γ* and for every γ
    assert s["canonical_logz_max_rel_dev"] < 1e-8 and s["canonical_var_max_rel_dev"] < 1e-8
    assert s["canonical_lambda_max_rel_dev"] < 1e-8 and s["every_gamma_max_rel_dev_logz"] < 1e-8
    assert s["every_gamma_max_rel_dev_var"] < 1e-8 and s["canonical_gamma_star_max_abs_dev"] < 1e-8
    # standard EB: not invariant; the orbit really is function-preserving
    assert s["standard_logz_max"] - s["standard_logz_min"] > 0.1
    assert s["f_dev_max"] < 1e-12 and s["c_dev_max"] < 1e-12

"""Declarations import, reject bad input with the field named, and the smoke presets fill every panel."""

import pytest

from apps.lab.declare import ValidationError, missing_panel_data
from apps.seirenes.experiments import ARMS, EXPERIMENTS, PAPER, SELFPLAY
from compute.core.reporter import MemoryReporter


def test_declarations():
    assert PAPER.slug == "seirenes" and {e.slug for e in EXPERIMENTS} == {"selfplay", "arms"}


def test_bad_input_rejected():
    with pytest.raises(ValidationError) as e:
        SELFPLAY.validate({"n_hints": 99})
    assert "n_hints" in e.value.errors
    with pytest.raises(ValidationError) as e:
        ARMS.validate({"arms": "clean,bogus"})
    assert "arms" in e.value.errors
    with pytest.raises(ValidationError) as e:
        ARMS.validate({"min_ops": 3, "max_ops": 2})
    assert "max_ops" in e.value.errors
    with pytest.raises(ValidationError) as e:
        ARMS.validate({"min_ops": 1})
    assert "min_ops" in e.value.errors
    assert ARMS.validate(ARMS.presets["two-step problems, hint-naive (CPU)"])["max_ops"] == 2
    spec_mix = ARMS.validate(ARMS.presets["two-step problems, spec SFT mixture (CPU)"])
    assert (spec_mix["min_ops"], spec_mix["max_ops"], spec_mix["sft_p_hinted"]) == (2, 2, 0.25)


@pytest.mark.parametrize("exp", EXPERIMENTS, ids=lambda e: e.slug)
def test_smoke_preset_fills_panels(exp, tmp_path):
    rep = MemoryReporter(data_dir=tmp_path)
    exp.run_local(exp.presets["smoke"], rep)
    assert missing_panel_data(exp, rep) == []

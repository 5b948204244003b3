"""The declaration API: one source of truth for validation, with messages naming the broken bound."""

import pytest

from apps.lab.declare import (
    Bool,
    Choice,
    DeclarationError,
    Experiment,
    Float,
    FloatList,
    Int,
    IntList,
    Line,
    Table,
    ValidationError,
    missing_panel_data,
)
from compute.core.reporter import MemoryReporter


def make(**kw):
    base = dict(
        slug="e",
        title="E",
        compute="tests.demo_paper.compute:counter",
        params=[
            Int("n", 10, min=1, max=100),
            Float("delta", 0.01, min=1e-10, max=0.2),
            Choice("rule", "a", choices=[("a", "A rule"), "b"]),
            Bool("flag", False),
            FloatList("mu", [0.5, 0.4], min=0, max=1, min_len=2, max_len=4),
            IntList("ks", [1, 2], min=1, max=9),
        ],
    )
    base.update(kw)
    return Experiment(**base)


def test_defaults_filled_and_types_coerced():
    e = make()
    out = e.validate({"n": "7", "mu": "0.3, 0.2,0.1", "flag": "on", "ks": [3.0]})
    assert out == {"n": 7, "delta": 0.01, "rule": "a", "flag": True, "mu": [0.3, 0.2, 0.1], "ks": [3]}


@pytest.mark.parametrize(
    "data,field,fragment",
    [
        ({"n": 0}, "n", "between 1 and 100"),
        ({"n": 1.5}, "n", "integer"),
        ({"n": True}, "n", "boolean"),
        ({"delta": 0.5}, "delta", "between 1e-10 and 0.2"),
        ({"delta": float("nan")}, "delta", "finite"),
        ({"rule": "c"}, "rule", "one of a, b"),
        ({"mu": [0.5]}, "mu", "between 2 and 4 items"),
        ({"mu": [0.5, 1.5]}, "mu", "item 2 must be between 0 and 1"),
        ({"mu": "x,y"}, "mu", "not a valid number"),
        ({"ks": [1.5, 2]}, "ks", "not a valid integer"),
        ({"bogus": 1}, "bogus", "unknown parameter"),
    ],
)
def test_bad_input_names_field_and_bound(data, field, fragment):
    with pytest.raises(ValidationError) as exc:
        make().validate(data)
    assert field in exc.value.errors
    assert fragment in exc.value.errors[field]


def test_invalid_default_or_preset_fails_at_declaration():
    with pytest.raises(DeclarationError):
        Int("n", 0, min=1, max=5)
    with pytest.raises(DeclarationError):
        make(presets={"bad": {"n": 1000}})
    with pytest.raises(DeclarationError):
        make(presets={"bad": {"nope": 1}})
    with pytest.raises(DeclarationError):
        make(check=lambda p: {"n": "never valid"})


def test_cross_field_check():
    e = make(check=lambda p: {"mu": "best arm must be unique"} if p["mu"].count(max(p["mu"])) > 1 else None)
    with pytest.raises(ValidationError) as exc:
        e.validate({"mu": [0.5, 0.5]})
    assert exc.value.errors == {"mu": "best arm must be unique"}


def test_json_schema_has_bounds():
    s = make().json_schema()
    assert s["additionalProperties"] is False
    assert s["properties"]["n"] == {"type": "integer", "default": 10, "description": "n", "minimum": 1, "maximum": 100}
    assert s["properties"]["rule"]["enum"] == ["a", "b"]
    assert s["properties"]["mu"]["items"] == {"type": "number", "minimum": 0, "maximum": 1}


def test_run_local_and_panel_check():
    from tests.demo_paper.experiments import EXPERIMENTS

    e = EXPERIMENTS[0]
    rep = MemoryReporter()
    summary = e.run_local({"n_steps": 4, "a": 1.5}, rep, seed=3)
    assert summary["last"] == pytest.approx(1.5 * 3)
    assert rep.values("demo/y") == [0.0, 1.5, 3.0, 4.5]
    assert missing_panel_data(e, rep) == []
    e2 = make(panels=[Line("x", keys=["nothing/*"]), Table("t", key="absent")])
    assert len(missing_panel_data(e2, rep)) == 2

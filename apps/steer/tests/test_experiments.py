"""Declarations validate, bad input names its field, every smoke preset runs and fills every panel."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.lab.declare import ValidationError, missing_panel_data
from apps.steer.experiments import EXPERIMENTS, PAPER
from compute.core.reporter import MemoryReporter

BY_SLUG = {e.slug: e for e in EXPERIMENTS}


def test_declarations() -> None:
    assert PAPER.slug == "steer"
    assert set(BY_SLUG) == {"sft_build", "route_rl", "pareto", "inspect"}
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and "paper headline" in e.presets
        for preset in e.presets.values():
            e.validate(preset)  # every preset is within the declared bounds


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("route_rl", {"method": "ppo"}, "method"),
        ("route_rl", {"beta": 0.9}, "beta"),
        ("route_rl", {"lam": 0.5}, "lam"),
        ("route_rl", {"oracle_tiers": "hard,extreme"}, "oracle_tiers"),
        ("route_rl", {"max_new": 32}, "max_new"),
        ("pareto", {"methods": "steer,ppo"}, "methods"),
        ("pareto", {"lams": "0,abc"}, "lams"),
        ("inspect", {"policy": "../../etc/passwd"}, "policy"),
        ("inspect", {"n_view": 50}, "n_view"),
        ("inspect", {"route": "sometimes"}, "route"),
        ("route_rl", {"scenes": "v3"}, "scenes"),
    ],
)
def test_bad_input_names_the_field(slug: str, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        BY_SLUG[slug].validate(params)
    assert field in exc.value.errors


def test_smoke_presets_run_and_fill_every_panel(tmp_path: Path) -> None:
    import torch

    torch.set_num_threads(1)
    for e in EXPERIMENTS:
        rep = MemoryReporter(data_dir=tmp_path)
        summary = e.run_local(e.presets["smoke"], rep)
        assert summary, e.slug
        assert missing_panel_data(e, rep) == [], e.slug


def test_inspect_reloads_an_e1_policy_exactly(tmp_path: Path) -> None:
    """E3 on the policy an E1 run saved, same scenes and seed: the same greedy evaluation as the run's own final
    one (the saved weights are the trained ones, not the SFT start); an unknown name is a clear error."""
    import torch

    torch.set_num_threads(1)
    params = {**BY_SLUG["route_rl"].presets["smoke"], "steps": 3}
    rl = BY_SLUG["route_rl"].run_local(params, MemoryReporter(data_dir=tmp_path))
    keys = ("size", "sft_tokens", "n_pool", "max_new", "n_eval_final")
    common = {k: params[k] for k in keys}
    got = BY_SLUG["inspect"].run_local({**common, "policy": rl["policy"]}, MemoryReporter(data_dir=tmp_path))
    assert got["policy"] == rl["policy"] and got["scenes"] == rl["n_eval_final"]
    assert (got["epdms"], got["tokens"]) == (rl["epdms"], rl["tokens"])
    sft = BY_SLUG["inspect"].run_local(common, MemoryReporter(data_dir=tmp_path))
    assert sft["sft_checkpoint"] == got["sft_checkpoint"] and sft["p_c"] != got["p_c"]  # RL weights, not SFT
    with pytest.raises(ValueError, match="saved: " + rl["policy"]):
        BY_SLUG["inspect"].run_local({**common, "policy": "steer-s9-000000000000"}, MemoryReporter(data_dir=tmp_path))


def test_route_audit_agrees_with_forced_route_evaluations(tmp_path: Path) -> None:
    """The audit's greedy always-/never-CoT scores are E3's own forced-route evaluations of the same scenes, its
    per-kind rows cover every scene once, and its router CoT ratio is E3's."""
    import torch

    torch.set_num_threads(1)
    inspect = BY_SLUG["inspect"]
    base = {**inspect.presets["smoke"], "n_eval_final": 12, "audit_samples": 1}
    rep = MemoryReporter(data_dir=tmp_path)
    got = inspect.run_local(base, rep)
    rows = rep.tables["route_audit"]["rows"]
    assert sum(r["scenes"] for r in rows) == 12 and len({(r["tier"], r["kind"]) for r in rows}) == len(rows)
    tiers = {r["tier"]: r for r in rep.tables["route_audit_tiers"]["rows"]}
    forced = {
        route: inspect.run_local({**base, "route": route, "audit_samples": 0}, MemoryReporter(data_dir=tmp_path))
        for route in ("always_cot", "never_cot")
    }
    assert abs(tiers["all"]["forced_cot"] - forced["always_cot"]["epdms"]) < 1e-12
    assert abs(tiers["all"]["forced_direct"] - forced["never_cot"]["epdms"]) < 1e-12
    for t in ("easy", "medium", "hard"):
        if got.get(f"cot_{t}") is not None:
            assert abs(tiers[t]["policy_cot"] - got[f"cot_{t}"]) < 1e-12

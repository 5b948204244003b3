"""Declarations validate, bad input names its field, every smoke preset runs (isolated runner) and fills its panels."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest

from apps.lab.declare import ValidationError, missing_panel_data
from apps.sregym.experiments import CATEGORIES, EXPERIMENTS, PAPER, PROBLEMS
from compute.core.reporter import MemoryReporter
from compute.sregym.problems import BY_ID
from compute.sregym.problems import CATEGORIES as COMPUTE_CATEGORIES

BY_SLUG = {e.slug: e for e in EXPERIMENTS}


def test_declarations() -> None:
    assert PAPER.slug == "sregym"
    assert set(BY_SLUG) == {"single_incident", "sweep", "metastability", "noise_robustness"}
    assert PROBLEMS == list(BY_ID) and CATEGORIES == COMPUTE_CATEGORIES and len(PROBLEMS) == 20
    for e in EXPERIMENTS:
        assert "smoke" in e.presets and "paper headline" in e.presets
        assert e.compute.startswith("compute.sregym.run:")
        e.load()


@pytest.mark.parametrize(
    ("slug", "params", "field"),
    [
        ("single_incident", {"problem": "meteor_strike"}, "problem"),
        ("single_incident", {"max_steps": 4}, "max_steps"),
        ("single_incident", {"max_steps": 51}, "max_steps"),
        ("single_incident", {"agent": "llm"}, "llm_base_url"),  # the LLM agent needs an endpoint
        ("single_incident", {"llm_base_url": "not a url"}, "llm_base_url"),
        ("single_incident", {"rate": 500}, "rate"),
        ("sweep", {"n_seeds": 9}, "n_seeds"),
        ("sweep", {"agents": "scripted+llm"}, "llm_base_url"),
        ("metastability", {"retries": [0, 6]}, "retries"),
        ("metastability", {"timeout_ms": 50}, "timeout_ms"),
        ("metastability", {"rates": [1000.0]}, "rates"),
        ("noise_robustness", {"problem": "no_fault"}, "problem"),
        ("noise_robustness", {"bogus": 1}, "bogus"),
    ],
)
def test_bad_input_names_the_field(slug: str, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        BY_SLUG[slug].validate(params)
    assert field in exc.value.errors


def _smoke(slug: str) -> tuple[str, dict, MemoryReporter]:
    e = BY_SLUG[slug]
    r = MemoryReporter()
    return slug, e.run_local(e.presets["smoke"], r), r


def test_smoke_presets_run_isolated_fill_panels_and_leave_no_process() -> None:
    with ThreadPoolExecutor(len(BY_SLUG)) as pool:  # the runs mostly sleep on timers: run them side by side
        results = list(pool.map(_smoke, sorted(BY_SLUG)))
    for slug, summary, r in results:
        assert summary and not summary.get("cancelled"), slug
        json.dumps(summary, allow_nan=False)
        assert missing_panel_data(BY_SLUG[slug], r) == [], slug
        assert r.progress_log and r.progress_log[-1][0] == pytest.approx(1.0)
        runner = summary["runner_pid"]
        survivors = []
        for p in psutil.process_iter(["pid"]):
            try:
                if os.getpgid(p.pid) == runner and p.status() != psutil.STATUS_ZOMBIE:
                    survivors.append(p.pid)
            except (ProcessLookupError, psutil.NoSuchProcess):
                pass
        assert survivors == [], f"{slug}: processes of the run's group survived: {survivors}"
    by = {slug: (summary, r) for slug, summary, r in results}
    inc, r = by["single_incident"]
    assert inc["detection"] and inc["localization"] and inc["diagnosis"]  # the scripted agent on a stale DB password
    assert any(row["oracle"] == "detection" for row in r.tables["verdicts"]["rows"])
    sweep, r = by["sweep"]
    assert r.tables["verdicts"]["rows"][0]["detection"] is True  # a no-fault control answered "No"
    meta, r = by["metastability"]
    assert meta["points"] == 1 and r.tables["grid"]["rows"][0]["predicted"] == "metastable"

"""Runs: execution through the reporter, batching, cancel, failure, guarded transitions, reaper."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.lab.models import Experiment, Run, RunStatus, SeriesChunk
from apps.lab.reaper import reap_stale_runs
from apps.lab.runner import execute_run
from apps.lab.services import cancel_run, create_run, resolve_config

pytestmark = pytest.mark.django_db


def demo_exp() -> Experiment:
    return Experiment.objects.get(paper__slug="demo", slug="counter")


def new_run(**config) -> Run:
    exp = demo_exp()
    return create_run(exp, resolve_config(exp, config), seed=5, source="cli", dispatch=False)


def test_catalog_synced_from_declarations(catalog):
    exp = demo_exp()
    assert exp.schema["properties"]["n_steps"]["maximum"] == 100_000
    assert set(exp.preset_rows.values_list("name", flat=True)) == {"smoke", "slow"}
    from apps.lab.catalog import sync_catalog

    exp.enabled = False
    exp.save()
    sync_catalog()  # idempotent, keeps staff fields
    exp.refresh_from_db()
    assert exp.enabled is False and Experiment.objects.filter(paper__slug="demo").count() == 2


def test_run_succeeds_and_stores_everything_in_batches(catalog):
    run = execute_run(new_run(n_steps=3, points_per_step=5000, a=0.5).pk)
    assert run.status == RunStatus.SUCCEEDED
    assert run.summary == {"last": 0.5 * (15000 - 1), "n_points": 15000, "device": "cpu"}
    assert run.started_at and run.finished_at and run.progress == 1.0
    assert run.environment["packages"]["torch"].startswith("2.13")
    xs, ys = [], []
    for c in SeriesChunk.objects.filter(run=run, key="demo/y").order_by("seq"):
        xs += c.steps
        ys += c.values
    assert xs == list(range(15000)) and ys == [0.5 * x for x in range(15000)]
    assert SeriesChunk.objects.filter(run=run).count() <= 3  # batched, not one row per float
    assert run.tables.get(key="summary").rows == [{"n": 3, "a": 0.5, "seed": 5}]
    assert run.figures.get(key="bar").figure["data"][0]["type"] == "bar"
    assert run.logs.get().message == "done"
    art = run.artifacts.get(name="result.txt")
    assert art.file.read().decode() == f"last={0.5 * 14999}\n"
    seqs = sorted(SeriesChunk.objects.filter(run=run).values_list("seq", flat=True))
    assert seqs == sorted(set(seqs)) and run.event_seq >= seqs[-1]


def test_failure_keeps_traceback_and_partial_series(catalog):
    run = execute_run(new_run(n_steps=10, fail=True).pk)
    assert run.status == RunStatus.FAILED
    assert run.error == "RuntimeError: demo failure requested"
    assert "Traceback" in run.traceback and "demo failure requested" in run.traceback
    stored = [v for c in SeriesChunk.objects.filter(run=run) for v in c.values]
    assert stored == [2.0 * i for i in range(5)]


def test_cancel_queued_run_never_starts(catalog):
    run = new_run()
    cancel_run(run)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    run = execute_run(run.pk)
    assert run.status == RunStatus.CANCELLED and run.started_at is None


def test_cancel_running_run_stops_at_next_report(catalog, monkeypatch):
    run = new_run(n_steps=1000)
    from apps.lab import runner

    original = runner.DBReporter.should_stop
    calls = {"n": 0}

    def should_stop(self):  # the cancel flag arrives while running (the heartbeat thread sets the event)
        calls["n"] += 1
        if calls["n"] == 10:
            Run.objects.filter(pk=run.pk).update(cancel_requested=True)
            self.cancel_event.set()
        return original(self)

    monkeypatch.setattr(runner.DBReporter, "should_stop", should_stop)
    run = execute_run(run.pk)
    assert run.status == RunStatus.CANCELLED
    assert run.summary == {"stopped_at": 9}


def test_transitions_are_compare_and_set(catalog):
    run = new_run()
    other = Run.objects.get(pk=run.pk)
    assert run.transition(RunStatus.RUNNING)
    assert not other.transition(RunStatus.RUNNING)  # a second worker cannot take it
    assert run.transition(RunStatus.SUCCEEDED)
    assert not run.transition(RunStatus.FAILED)  # terminal states are final
    assert not run.transition(RunStatus.CANCELLED)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED


def test_reaper_fails_runs_with_stale_heartbeat(catalog):
    stale, fresh = new_run(), new_run()
    stale.transition(RunStatus.RUNNING, heartbeat_at=timezone.now() - timedelta(seconds=600))
    fresh.transition(RunStatus.RUNNING, heartbeat_at=timezone.now())
    assert reap_stale_runs(60) == [stale.pk]
    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert stale.status == RunStatus.FAILED and "worker lost" in stale.error
    assert fresh.status == RunStatus.RUNNING


def test_same_seed_same_summary(catalog):
    a = execute_run(new_run(n_steps=4).pk)
    b = execute_run(new_run(n_steps=4).pk)
    assert a.summary == b.summary

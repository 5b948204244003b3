"""A real Celery worker process against Redis and PostgreSQL: end to end, cancel, and killed workers."""

import signal
import time

import pytest
from rest_framework.test import APIClient

from apps.lab.models import Run, RunStatus, SeriesChunk
from apps.lab.reaper import reap_stale_runs

from .conftest import start_worker

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def wait_for(pred, timeout=60.0, every=0.2, why=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("condition not reached in time" + (f":\n{why()}" if why else ""))


def run_state(rid, worker=None):
    """What a failed wait should print: the run's row and the worker's log tail (for flakes under load)."""
    run = Run.objects.get(pk=rid)
    state = f"run {rid}: status={run.status} points={n_points(rid)} error={str(run.error)[-600:]!r}"
    return state + ("\n--- worker log tail ---\n" + worker.output()[-3000:] if worker else "")


def api_for(user):
    c = APIClient()
    c.force_authenticate(user)
    return c


def status(rid):
    return Run.objects.get(pk=rid).status


def n_points(rid):
    return sum(len(v) for v in SeriesChunk.objects.filter(run_id=rid).values_list("values", flat=True))


def test_worker_executes_run_end_to_end(catalog, user, worker):
    r = api_for(user).post(
        "/api/runs/", {"experiment": "demo/counter", "config": {"n_steps": 30, "a": 0.5}, "seed": 3}, format="json"
    )
    assert r.status_code == 201
    rid = r.json()["id"]
    wait_for(lambda: status(rid) == RunStatus.SUCCEEDED, 60)
    run = Run.objects.get(pk=rid)
    assert run.summary["last"] == 0.5 * 29 and run.task_id and run.worker.startswith("w1@")
    assert n_points(rid) == 30


def test_cancel_stops_running_compute(catalog, user, worker):
    c = api_for(user)
    rid = c.post("/api/runs/", {"experiment": "demo/counter", "preset": "slow"}, format="json").json()["id"]
    wait_for(lambda: status(rid) == RunStatus.RUNNING and n_points(rid) > 0, 60)
    assert c.post(f"/api/runs/{rid}/cancel/").status_code == 200
    wait_for(lambda: status(rid) == RunStatus.CANCELLED, 30)
    assert Run.objects.get(pk=rid).summary.get("stopped_at", 400) < 400


def test_killed_worker_run_ends_failed_and_others_finish(catalog, user, tmp_path, purge_queues):
    c = api_for(user)
    w1 = start_worker(tmp_path, "w1", concurrency=1)
    try:
        rid = c.post("/api/runs/", {"experiment": "demo/counter", "preset": "slow"}, format="json").json()["id"]
        wait_for(lambda: status(rid) == RunStatus.RUNNING and n_points(rid) >= 10, 60)
    finally:
        w1.kill(signal.SIGKILL)  # the whole worker, main process and child, dies mid-run
    stored = n_points(rid)
    assert status(rid) == RunStatus.RUNNING  # nobody told the database yet
    time.sleep(7)  # test settings: stale after 6 s without heartbeat
    assert reap_stale_runs() == [rid]
    run = Run.objects.get(pk=rid)
    assert run.status == RunStatus.FAILED and "worker lost" in run.error
    assert n_points(rid) == stored  # every point written before the kill is still there
    xs = sorted(x for c in SeriesChunk.objects.filter(run_id=rid) for x in c.steps)
    assert xs == list(range(len(xs)))  # no gap

    w2 = start_worker(tmp_path, "w2", concurrency=1)
    try:
        other = c.post("/api/runs/", {"experiment": "demo/counter", "preset": "smoke"}, format="json").json()["id"]
        wait_for(lambda: status(other) == RunStatus.SUCCEEDED, 60)
        assert status(rid) == RunStatus.FAILED  # the lost run is not resurrected
    finally:
        w2.kill()


def test_killed_child_process_fails_run_at_once(catalog, user, tmp_path, purge_queues):
    import os

    c = api_for(user)
    w = start_worker(tmp_path, "w3", concurrency=1)
    try:
        rid = c.post("/api/runs/", {"experiment": "demo/counter", "preset": "slow"}, format="json").json()["id"]
        wait_for(lambda: status(rid) == RunStatus.RUNNING and n_points(rid) >= 5, 60)
        pid = Run.objects.get(pk=rid).environment["pid"]
        os.kill(pid, signal.SIGKILL)  # the pool child running the compute dies; the main process survives
        wait_for(lambda: status(rid) == RunStatus.FAILED, 30)
        assert "WorkerLostError" in Run.objects.get(pk=rid).error
    finally:
        w.kill()


def test_soft_and_hard_time_limits(catalog, user, worker):
    c = api_for(user)
    soft = c.post("/api/runs/", {"experiment": "demo/sleeper", "config": {"seconds": 30}}, format="json").json()["id"]
    # 4-s soft limit; the wait is wide because CI may share the cores with training runs
    wait_for(lambda: status(soft) == RunStatus.FAILED, 90, why=lambda: run_state(soft, worker))
    run = Run.objects.get(pk=soft)
    assert "soft time limit" in run.error and n_points(soft) > 5  # partial results were flushed
    hard = c.post(
        "/api/runs/", {"experiment": "demo/sleeper", "config": {"seconds": 30, "ignore_soft": True}}, format="json"
    ).json()["id"]
    wait_for(lambda: status(hard) == RunStatus.FAILED, 90, why=lambda: run_state(hard, worker))
    assert "hard time limit" in Run.objects.get(pk=hard).error


def test_workers_overview_sees_live_worker(catalog, worker):
    from apps.lab.workers import workers_overview

    info = wait_for(lambda: [w for w in workers_overview(timeout=2.0)["workers"] if w["online"]], 20)
    assert (
        info[0]["hostname"].startswith("w1@")
        and set(info[0]["queues"]) == {"cpu", "gpu"}
        and info[0]["device"] == "cpu"
    )
    assert workers_overview()["queues"]["cpu"] == 0

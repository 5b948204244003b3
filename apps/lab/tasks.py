"""Celery tasks: execute a run; reap stale runs."""

from __future__ import annotations

from celery import shared_task

try:  # import torch once in the worker's main process, before the pool forks (seconds per child otherwise)
    import torch  # noqa: F401
except ImportError:  # pragma: no cover
    pass

from .reaper import reap_stale_runs
from .runner import execute_run


@shared_task(name="lab.execute_run", bind=True, acks_late=True, reject_on_worker_lost=False)
def execute_run_task(self, run_id: int) -> str:  # type: ignore[no-untyped-def]
    run = execute_run(run_id, worker=self.request.hostname or "")
    return run.status


@shared_task(name="lab.reap_stale_runs")
def reap_stale_runs_task() -> list[int]:
    return reap_stale_runs()

"""Signal handlers: catalog sync after migrate; Celery failures (hard time limit, lost worker) end the run."""

from __future__ import annotations

import logging

from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from celery.signals import task_failure, worker_ready
from django.db.models.signals import post_migrate
from django.dispatch import receiver

log = logging.getLogger(__name__)


@receiver(post_migrate)
def _sync_after_migrate(sender, **kwargs):  # type: ignore[no-untyped-def]
    if getattr(sender, "name", "") != "apps.lab":
        return
    from .catalog import sync_catalog

    sync_catalog()


@task_failure.connect
def _task_failed(sender=None, task_id=None, exception=None, args=None, einfo=None, **kwargs):  # type: ignore[no-untyped-def]
    """Runs in the worker's main process when a child was killed (time limit, SIGKILL): fail the run."""
    if getattr(sender, "name", "") != "lab.execute_run" or not args:
        return
    from .models import Run, RunStatus

    run = Run.objects.filter(pk=args[0]).first()
    if run is None or run.is_terminal:
        return
    reason = f"{type(exception).__name__}: {exception}" if exception else "task failed"
    if isinstance(exception, SoftTimeLimitExceeded):
        reason = "soft time limit exceeded"
    elif isinstance(exception, TimeLimitExceeded):
        reason = f"hard time limit exceeded ({reason}): the worker process was killed"
    run.transition(RunStatus.FAILED, error=reason, traceback=str(einfo or ""))
    from .events import publish_state

    publish_state(run)


@worker_ready.connect
def _on_worker_ready(sender=None, **kwargs):  # type: ignore[no-untyped-def]
    """Record the worker (queues, device) for the workers page, and reap runs left by dead workers."""
    from .reaper import reap_stale_runs
    from .workers import record_worker

    try:
        queues = [q.name for q in sender.task_consumer.queues] if sender is not None else []
        concurrency = (
            getattr(getattr(sender, "pool", None), "num_processes", None) or getattr(sender, "concurrency", 1) or 1
        )
        record_worker(getattr(sender, "hostname", "worker"), queues, int(concurrency))
    except Exception:  # noqa: BLE001 - never block worker start
        log.exception("could not record worker")
    try:
        reap_stale_runs()
    except Exception:  # noqa: BLE001
        log.exception("reaper failed at worker start")

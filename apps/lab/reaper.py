"""Stale-run detection: a run whose heartbeat stopped (worker killed) ends as failed, never stuck."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from .events import publish_state
from .models import Run, RunStatus


def reap_stale_runs(stale_after: float | None = None) -> list[int]:
    """Mark 'running' runs whose heartbeat is older than ``stale_after`` seconds as failed; return their ids."""
    stale_after = settings.PAPERLAB["STALE_AFTER_SECONDS"] if stale_after is None else stale_after
    cutoff = timezone.now() - timedelta(seconds=stale_after)
    reaped = []
    candidates = Run.objects.filter(status=RunStatus.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True)
    )
    for run in candidates:
        if run.transition(
            RunStatus.FAILED,
            error=f"worker lost: no heartbeat for more than {stale_after:.0f} s (the worker process died or was killed)",
        ):
            reaped.append(run.pk)
            publish_state(run)
            _advance(run)
    # cancel grace period: a running compute that ignored the cancel is terminated
    grace = timezone.now() - timedelta(seconds=settings.PAPERLAB["CANCEL_GRACE_SECONDS"])
    for run in Run.objects.filter(status=RunStatus.RUNNING, cancel_requested=True, cancel_requested_at__lt=grace):
        if run.task_id:
            from config.celery import app

            app.control.revoke(run.task_id, terminate=True, signal="SIGKILL")
        if run.transition(RunStatus.CANCELLED, progress_message="cancelled: terminated after the grace period"):
            reaped.append(run.pk)
            publish_state(run)
            _advance(run)
    return reaped


def _advance(run: Run) -> None:
    if run.sweep_id:
        from .sweeps import advance_sweep

        advance_sweep(run.sweep_id)

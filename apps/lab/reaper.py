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
    candidates = Run.objects.filter(status=RunStatus.RUNNING).filter(Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True))
    for run in candidates:
        if run.transition(
            RunStatus.FAILED,
            error=f"worker lost: no heartbeat for more than {stale_after:.0f} s (the worker process died or was killed)",
        ):
            reaped.append(run.pk)
            publish_state(run)
    return reaped

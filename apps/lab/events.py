"""Live events: what goes to a run's Channels group, and the snapshot a socket gets on connect.

Every stored item carries the run's event sequence number; the snapshot says the last one it
includes, so a client drops deltas it has already seen (no gap, no duplicate).
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from celery.exceptions import SoftTimeLimitExceeded
from channels.layers import get_channel_layer

from .downsample import downsample
from .models import Run

log = logging.getLogger(__name__)


def group_name(run_id: int) -> str:
    return f"run_{run_id}"


def state_payload(run: Run) -> dict[str, Any]:
    return {
        "id": run.pk,
        "status": run.status,
        "progress": run.progress,
        "progress_message": run.progress_message,
        "eta_seconds": run.eta_seconds,
        "device": run.device,
        "error": run.error,
        "traceback": run.traceback,
        "summary": run.summary,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "cancel_requested": run.cancel_requested,
    }


def publish(run_id: int, event: dict[str, Any]) -> None:
    """Send one event to the run's group; never let a broken channel layer fail the run.  The run's soft time limit
    (Celery raises it wherever the task is, often inside this send, since every flush publishes) is not a channel
    failure and goes on to the runner, which ends the run; swallowing it here left the run to the hard kill."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group_name(run_id), {"type": "run.event", "event": event})
    except SoftTimeLimitExceeded:
        raise
    except Exception:  # noqa: BLE001
        log.warning("could not publish event for run %s", run_id, exc_info=True)


def publish_state(run: Run) -> None:
    publish(run.pk, {"kind": "state", "data": state_payload(run)})


def series_for(run: Run, keys: list[str] | None = None, max_points: int | None = None) -> dict[str, dict[str, Any]]:
    """All stored points per key (optionally only ``keys``), downsampled to ``max_points`` per key."""
    qs = run.chunks.order_by("seq").values_list("key", "steps", "values")
    if keys:
        qs = qs.filter(key__in=keys)
    out: dict[str, dict[str, Any]] = {}
    for key, steps, values in qs.iterator():
        s = out.setdefault(key, {"x": [], "y": []})
        s["x"].extend(steps)
        s["y"].extend(values)
    for s in out.values():
        s["n"] = len(s["x"])
        if max_points and s["n"] > max_points:
            s["x"], s["y"] = downsample(s["x"], s["y"], max_points)
            s["downsampled"] = "minmax"
    return out


def snapshot(run: Run, max_points: int = 4000) -> dict[str, Any]:
    run.refresh_from_db()
    seq = run.event_seq
    return {
        "kind": "snapshot",
        "seq": seq,
        "state": state_payload(run),
        "series": series_for(run, max_points=max_points),
        "tables": {t.key: {"columns": t.columns, "rows": t.rows} for t in run.tables.all()},
        "figures": {f.key: f.figure for f in run.figures.all()},
        "logs": [{"seq": lg.seq, "level": lg.level, "message": lg.message} for lg in run.logs.order_by("-seq")[:500]][
            ::-1
        ],
        "artifacts": [
            {"name": a.name, "size": a.size, "url": f"/api/runs/{run.pk}/artifacts/{a.name}/"}
            for a in run.artifacts.all()
        ],
    }

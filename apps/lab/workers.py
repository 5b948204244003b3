"""What the Celery workers are doing: online workers, their queues and device, current runs, queue lengths."""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone

from .models import Run, WorkerInfo

log = logging.getLogger(__name__)


def record_worker(hostname: str, queues: list[str], concurrency: int) -> None:
    from compute.core.runtime import resolve_device

    device = resolve_device("auto")
    if device == "cuda":
        try:
            import torch

            device = f"cuda: {torch.cuda.get_device_name(0)} (×{torch.cuda.device_count()})"
        except Exception:  # noqa: BLE001
            pass
    else:
        device = "cpu"
    WorkerInfo.objects.update_or_create(
        hostname=hostname,
        defaults={
            "queues": queues,
            "device": device,
            "concurrency": concurrency,
            "started_at": timezone.now(),
            "last_seen": timezone.now(),
        },
    )


def queue_lengths(names: list[str]) -> dict[str, int | None]:
    from config.celery import app

    out: dict[str, int | None] = {}
    try:
        with app.connection_for_read() as conn:
            client = conn.default_channel.client
            for name in names:
                out[name] = int(client.llen(name))
    except Exception:  # noqa: BLE001 - the page must render even if the broker is down
        log.warning("could not read queue lengths", exc_info=True)
        out = {n: None for n in names}
    return out


def workers_overview(timeout: float = 1.0) -> dict[str, Any]:
    from config.celery import app

    insp = app.control.inspect(timeout=timeout)
    try:
        ping = insp.ping() or {}
        active = insp.active() or {}
        queues = insp.active_queues() or {}
    except Exception:  # noqa: BLE001
        ping, active, queues = {}, {}, {}
    infos = {w.hostname: w for w in WorkerInfo.objects.all()}
    rows = []
    for host in sorted(set(ping) | set(infos)):
        info = infos.get(host)
        run_ids = [t["args"][0] for t in active.get(host, []) if t.get("name") == "lab.execute_run" and t.get("args")]
        rows.append(
            {
                "hostname": host,
                "online": host in ping,
                "queues": [q["name"] for q in queues.get(host, [])] or (info.queues if info else []),
                "device": info.device if info else "",
                "concurrency": info.concurrency if info else None,
                "started_at": info.started_at.isoformat() if info else None,
                "runs": [
                    {"id": r.pk, "experiment": r.experiment.key, "progress": r.progress}
                    for r in Run.objects.filter(pk__in=run_ids).select_related("experiment__paper")
                ],
            }
        )
    return {"workers": rows, "queues": queue_lengths(["cpu", "gpu"])}

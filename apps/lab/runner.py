"""Execute one run: the same code path from Celery, `manage.py runexperiment` and tests.

The compute function gets a ``DBReporter``: everything it reports is buffered, written to the
database in batches (one SeriesChunk per key per flush, not one row per float) and pushed to the
run's Channels group.  A heartbeat thread keeps ``heartbeat_at`` fresh and watches for cancel.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
import threading
import time
import traceback as tb
from collections import defaultdict
from importlib import metadata
from typing import Any, TextIO

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import connection, transaction
from django.utils import timezone

from compute.core.reporter import Reporter, StopRequested

from .events import publish, publish_state
from .models import Artifact, Run, RunFigure, RunLog, RunStatus, RunTable, SeriesChunk

CFG = settings.PAPERLAB


class DBReporter(Reporter):
    """Stores and streams what the compute reports.  Not thread-safe: one compute thread per run."""

    def __init__(self, run: Run, console: TextIO | None = None) -> None:
        super().__init__(data_dir=settings.DATA_DIR, device=run.device or "cpu")
        self.run = run
        self.console = console
        self.seq = run.event_seq
        self._points: dict[str, tuple[list[float], list[float | None]]] = defaultdict(lambda: ([], []))
        self._npoints = 0
        self._pending_tables: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
        self._pending_figures: dict[str, dict[str, Any]] = {}
        self._pending_logs: list[tuple[str, str]] = []
        self._progress: tuple[float, str] | None = None
        self._last_flush = time.monotonic()
        self._started = time.monotonic()
        self._last_console = 0.0
        self.cancel_event = threading.Event()

    # -- hooks ----------------------------------------------------------------------------------
    def _emit_progress(self, fraction: float, message: str) -> None:
        self._progress = (fraction, message)
        if self.console is not None:
            now = time.monotonic()
            if now - self._last_console > 0.2 or fraction >= 1.0:
                self._last_console = now
                filled = int(round(30 * fraction))
                self.console.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {100 * fraction:5.1f}% {message[:70]:<70}")
                self.console.flush()
        self._maybe_flush()

    def _emit_points(self, key: str, steps: list[float], values: list[float | None]) -> None:
        xs, ys = self._points[key]
        xs.extend(steps)
        ys.extend(values)
        self._npoints += len(steps)
        self._maybe_flush()

    def _emit_table(self, key: str, columns: list[str], rows: list[dict[str, Any]]) -> None:
        self._pending_tables[key] = (columns, rows)
        self._maybe_flush()

    def _emit_figure(self, key: str, fig: dict[str, Any]) -> None:
        self._pending_figures[key] = fig
        self._maybe_flush()

    def _emit_log(self, level: str, message: str) -> None:
        self._pending_logs.append((level, message))
        if self.console is not None:
            self.console.write(f"\n[{level}] {message}\n")
        self._maybe_flush()

    def _emit_artifact(self, name: str, data: bytes, content_type: str) -> None:
        Artifact.objects.filter(run=self.run, name=name).delete()
        art = Artifact(run=self.run, name=name, content_type=content_type, size=len(data))
        art.file.save(name, ContentFile(data), save=True)
        self.seq += 1
        publish(
            self.run.pk,
            {
                "kind": "artifact",
                "seq": self.seq,
                "data": {"name": name, "size": len(data), "url": f"/api/runs/{self.run.pk}/artifacts/{name}/"},
            },
        )

    def should_stop(self) -> bool:
        return self.cancel_event.is_set()

    # -- batching -------------------------------------------------------------------------------
    def _maybe_flush(self) -> None:
        if self._npoints >= 20000 or time.monotonic() - self._last_flush >= CFG["FLUSH_SECONDS"]:
            self.flush()

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        chunks, tables, figures, logs = [], [], [], []
        for key, (xs, ys) in self._points.items():
            if xs:
                self.seq += 1
                chunks.append(SeriesChunk(run=self.run, key=key, seq=self.seq, steps=xs, values=ys))
        self._points.clear()
        self._npoints = 0
        for key, (columns, rows) in self._pending_tables.items():
            self.seq += 1
            tables.append((key, columns, rows, self.seq))
        for key, fig in self._pending_figures.items():
            self.seq += 1
            figures.append((key, fig, self.seq))
        for level, message in self._pending_logs:
            self.seq += 1
            logs.append(RunLog(run=self.run, seq=self.seq, level=level, message=message))
        self._pending_tables, self._pending_figures, self._pending_logs = {}, {}, []
        fields: dict[str, Any] = {"event_seq": self.seq, "heartbeat_at": timezone.now()}
        if self._progress is not None:
            frac, msg = self._progress
            elapsed = time.monotonic() - self._started
            fields.update(
                progress=frac,
                progress_message=msg[:300],
                eta_seconds=(elapsed * (1 - frac) / frac) if frac > 0.01 else None,
            )
        with transaction.atomic():
            if chunks:
                SeriesChunk.objects.bulk_create(chunks)
            for key, columns, rows, seq in tables:
                RunTable.objects.update_or_create(
                    run=self.run, key=key, defaults={"columns": columns, "rows": rows, "seq": seq}
                )
            for key, fig, seq in figures:
                RunFigure.objects.update_or_create(run=self.run, key=key, defaults={"figure": fig, "seq": seq})
            if logs:
                RunLog.objects.bulk_create(logs)
            Run.objects.filter(pk=self.run.pk).update(**fields)
        for k, v in fields.items():
            setattr(self.run, k, v)
        if chunks:
            publish(
                self.run.pk,
                {"kind": "points", "data": [{"key": c.key, "seq": c.seq, "x": c.steps, "y": c.values} for c in chunks]},
            )
        for key, columns, rows, seq in tables:
            publish(self.run.pk, {"kind": "table", "seq": seq, "key": key, "data": {"columns": columns, "rows": rows}})
        for key, fig, seq in figures:
            publish(self.run.pk, {"kind": "figure", "seq": seq, "key": key, "data": fig})
        for lg in logs:
            publish(self.run.pk, {"kind": "log", "seq": lg.seq, "data": {"level": lg.level, "message": lg.message}})
        if self._progress is not None:
            publish(
                self.run.pk,
                {
                    "kind": "progress",
                    "data": {
                        "progress": self.run.progress,
                        "progress_message": self.run.progress_message,
                        "eta_seconds": self.run.eta_seconds,
                    },
                },
            )
            self._progress = None


class Heartbeat(threading.Thread):
    """Refreshes heartbeat_at and watches cancel_requested while the compute runs."""

    def __init__(self, run_id: int, cancel_event: threading.Event, interval: float) -> None:
        super().__init__(daemon=True, name=f"heartbeat-{run_id}")
        self.run_id, self.cancel_event, self.interval = run_id, cancel_event, interval
        self.done = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.wait(min(self.interval, 1.0)):
                Run.objects.filter(pk=self.run_id).update(heartbeat_at=timezone.now())
                if Run.objects.filter(pk=self.run_id, cancel_requested=True).exists():
                    self.cancel_event.set()
        finally:
            connection.close()


def environment_info(device: str) -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "packages": {},
    }
    for pkg in ("numpy", "scipy", "torch", "Django", "celery", "channels"):
        try:
            info["packages"][pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
        info["device"] = device
        if device.startswith("cuda"):
            info["cuda_device"] = torch.cuda.get_device_name(0)
    except ImportError:  # pragma: no cover
        pass
    try:
        info["git_commit"] = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        info["git_commit"] = ""
    return info


def execute_run(run_id: int, console: TextIO | None = None, worker: str = "") -> Run:
    """Run one queued run to a terminal state.  Never leaves it 'running' on an exception."""
    run = Run.objects.select_related("experiment__paper").get(pk=run_id)
    decl = run.experiment.declaration
    device = _resolve_device(run.device_requested)
    if not run.transition(
        RunStatus.RUNNING,
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
        device=device,
        worker=worker or socket.gethostname(),
    ):
        return run  # cancelled (or already taken) before it started
    reporter = DBReporter(run, console=console)
    beat = Heartbeat(run.pk, reporter.cancel_event, CFG["HEARTBEAT_SECONDS"])
    beat.start()
    try:
        _set_threads(max(1, int(decl.threads)))
        run.environment = environment_info(device)
        Run.objects.filter(pk=run.pk).update(environment=run.environment)
        publish_state(run)
        from compute.core.runtime import seed_everything

        seed_everything(run.seed)
        params = dict(run.config, seed=run.seed, device=device)
        summary = decl.load()(params, reporter) or {}
        reporter.flush()
        if reporter.should_stop() or Run.objects.filter(pk=run.pk, cancel_requested=True).exists():
            run.transition(RunStatus.CANCELLED, summary=_jsonable(summary), progress_message="cancelled")
        else:
            run.transition(RunStatus.SUCCEEDED, summary=_jsonable(summary), progress=1.0, eta_seconds=0.0)
    except StopRequested:
        reporter.flush()
        run.transition(RunStatus.CANCELLED, progress_message="cancelled")
    except BaseException as exc:  # noqa: BLE001 - every failure must end the run, incl. SoftTimeLimitExceeded
        try:
            reporter.flush()
        except Exception:  # noqa: BLE001
            pass
        reason = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, SoftTimeLimitExceeded):
            reason = "soft time limit exceeded (partial results were saved)"
        run.transition(RunStatus.FAILED, error=reason[:5000], traceback=tb.format_exc())
        if not isinstance(exc, Exception):
            raise
    finally:
        beat.done.set()
        beat.join(timeout=5)
        run.refresh_from_db()
        publish_state(run)
        if run.sweep_id:
            from .sweeps import advance_sweep

            advance_sweep(run.sweep_id)
    return run


def _resolve_device(requested: str) -> str:
    from compute.core.runtime import resolve_device

    return resolve_device(requested or "auto")


def _set_threads(n: int) -> None:
    try:
        import torch

        torch.set_num_threads(n)
    except ImportError:  # pragma: no cover
        pass


def _jsonable(obj: Any) -> Any:
    from compute.core.reporter import jsonable

    return jsonable(obj)

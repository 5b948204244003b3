"""The reporter: the only channel between compute code and the outside world.

Compute entry points have the signature ``run(params: dict, reporter: Reporter) -> dict``.
``params`` holds the validated experiment parameters plus ``seed`` (int) and ``device``
("cpu" or "cuda", already resolved from "auto").  The returned dict is the run's summary
(JSON-serializable scalars, short lists, strings).

Everything the compute wants to show goes through the reporter:

* ``progress(fraction, message)``    — progress bar (0..1) and a status line.
* ``scalar(key, step, value)``       — one point of a series; keys are ``group/name``.
* ``scalars(step, {key: value})``    — several series at the same step.
* ``table(key, rows, columns)``      — a table (list of dicts); reporting the same key replaces it.
* ``figure(key, fig)``               — a Plotly figure as a plain dict {"data": [...], "layout": {...}};
                                       reporting the same key replaces it.
* ``log(message, level)``            — a log line.
* ``artifact(name, data)``           — a file (bytes or str) kept with the run.
* ``should_stop()``                  — True once a cancel was requested: return soon (partial summary is fine).

``MemoryReporter`` keeps everything in memory: use it in tests and notebooks.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from pathlib import Path
from typing import Any


class StopRequested(Exception):
    """Raised by ``Reporter.check_stop()`` so deep loops can unwind on cancel."""


class Reporter:
    """Base class.  Subclasses override the ``_emit_*`` hooks; the public API is fixed."""

    def __init__(self, data_dir: str | Path | None = None, device: str = "cpu") -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else Path("data")
        self.device = device

    # -- progress ---------------------------------------------------------------------------
    def progress(self, fraction: float, message: str = "") -> None:
        fraction = min(1.0, max(0.0, float(fraction)))
        self._emit_progress(fraction, str(message))

    # -- series -----------------------------------------------------------------------------
    def scalar(self, key: str, step: float, value: float) -> None:
        self._emit_points(str(key), [float(step)], [_num(value)])

    def scalars(self, step: float, values: dict[str, float]) -> None:
        for key, value in values.items():
            self._emit_points(str(key), [float(step)], [_num(value)])

    def series(self, key: str, steps: list[float], values: list[float]) -> None:
        """Many points of one series at once (e.g. a whole curve computed in a batch)."""
        steps = [float(s) for s in steps]
        values = [_num(v) for v in values]
        if len(steps) != len(values):
            raise ValueError(f"series {key!r}: {len(steps)} steps but {len(values)} values")
        if steps:
            self._emit_points(str(key), steps, values)

    # -- tables, figures, logs, artifacts ----------------------------------------------------
    def table(self, key: str, rows: list[dict[str, Any]], columns: list[str] | None = None) -> None:
        rows = [dict(r) for r in rows]
        if columns is None:
            columns = []
            for r in rows:
                for c in r:
                    if c not in columns:
                        columns.append(c)
        self._emit_table(str(key), list(columns), [_jsonable(r) for r in rows])

    def figure(self, key: str, fig: dict[str, Any]) -> None:
        if not isinstance(fig, dict) or "data" not in fig:
            raise ValueError("a figure is a dict with a 'data' list (and optional 'layout')")
        self._emit_figure(str(key), _jsonable(fig))

    def log(self, message: str, level: str = "info") -> None:
        self._emit_log(level, str(message))

    def artifact(self, name: str, data: bytes | str, content_type: str = "application/octet-stream") -> None:
        if isinstance(data, str):
            data = data.encode()
            if content_type == "application/octet-stream":
                content_type = "text/plain"
        self._emit_artifact(str(name), bytes(data), content_type)

    def should_stop(self) -> bool:
        return False

    def check_stop(self) -> None:
        if self.should_stop():
            raise StopRequested()

    # -- hooks ------------------------------------------------------------------------------
    def _emit_progress(self, fraction: float, message: str) -> None: ...
    def _emit_points(self, key: str, steps: list[float], values: list[float | None]) -> None: ...
    def _emit_table(self, key: str, columns: list[str], rows: list[dict[str, Any]]) -> None: ...
    def _emit_figure(self, key: str, fig: dict[str, Any]) -> None: ...
    def _emit_log(self, level: str, message: str) -> None: ...
    def _emit_artifact(self, name: str, data: bytes, content_type: str) -> None: ...

    def flush(self) -> None:
        """Push buffered data out (called by the runner at the end)."""


class MemoryReporter(Reporter):
    """Keeps everything reported; for tests.  ``stop_after`` simulates a cancel after N checks."""

    def __init__(self, data_dir: str | Path | None = None, device: str = "cpu", stop_after: int | None = None) -> None:
        super().__init__(data_dir=data_dir, device=device)
        self.progress_log: list[tuple[float, str]] = []
        self.points: dict[str, tuple[list[float], list[float | None]]] = defaultdict(lambda: ([], []))
        self.tables: dict[str, dict[str, Any]] = {}
        self.figures: dict[str, dict[str, Any]] = {}
        self.logs: list[tuple[str, str]] = []
        self.artifacts: dict[str, tuple[bytes, str]] = {}
        self._stop_after = stop_after
        self._stop_checks = 0

    def _emit_progress(self, fraction: float, message: str) -> None:
        self.progress_log.append((fraction, message))

    def _emit_points(self, key: str, steps: list[float], values: list[float | None]) -> None:
        xs, ys = self.points[key]
        xs.extend(steps)
        ys.extend(values)

    def _emit_table(self, key: str, columns: list[str], rows: list[dict[str, Any]]) -> None:
        self.tables[key] = {"columns": columns, "rows": rows}

    def _emit_figure(self, key: str, fig: dict[str, Any]) -> None:
        self.figures[key] = fig

    def _emit_log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    def _emit_artifact(self, name: str, data: bytes, content_type: str) -> None:
        self.artifacts[name] = (data, content_type)

    def should_stop(self) -> bool:
        self._stop_checks += 1
        return self._stop_after is not None and self._stop_checks > self._stop_after

    # convenience for tests
    def values(self, key: str) -> list[float | None]:
        return list(self.points[key][1]) if key in self.points else []

    def steps(self, key: str) -> list[float]:
        return list(self.points[key][0]) if key in self.points else []


class ConsoleReporter(MemoryReporter):
    """MemoryReporter that also draws a progress bar and log lines on a text stream (stderr)."""

    def __init__(self, stream: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self._stream = stream
        self._last = 0.0

    def _emit_progress(self, fraction: float, message: str) -> None:
        super()._emit_progress(fraction, message)
        now = time.monotonic()
        if now - self._last < 0.2 and fraction < 1.0:
            return
        self._last = now
        width = 30
        filled = int(round(width * fraction))
        self._stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {100 * fraction:5.1f}% {message[:60]:<60}")
        if fraction >= 1.0:
            self._stream.write("\n")
        self._stream.flush()

    def _emit_log(self, level: str, message: str) -> None:
        super()._emit_log(level, message)
        self._stream.write(f"\n[{level}] {message}\n")
        self._stream.flush()


def _num(value: Any) -> float | None:
    """A float for JSON; NaN/inf become None (JSON has no NaN)."""
    v = float(value)
    return v if math.isfinite(v) else None


def _jsonable(obj: Any) -> Any:
    """Convert numpy/torch scalars and arrays, tuples and non-finite floats into plain JSON values."""
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    tolist = getattr(obj, "tolist", None)
    if callable(tolist):  # numpy arrays/scalars, torch tensors
        return _jsonable(tolist())
    item = getattr(obj, "item", None)
    if callable(item):
        return _jsonable(item())
    return str(obj)


jsonable = _jsonable

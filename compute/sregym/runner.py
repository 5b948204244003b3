"""The isolated runner: ``python -m compute.sregym.runner <job>`` with the params as JSON on stdin.

A Celery prefork child must not host the supervisor (spec "Runner isolation"): the entry points in
``run.py`` start this module as a new process-group leader; it owns every service process and
streams the Reporter calls back as JSON lines on stdout (``{"op": ..., ...}``).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from typing import Any

from compute.core.reporter import Reporter


class JsonLinesReporter(Reporter):
    """Serialises every reporter call as one JSON line on stdout."""

    def _out(self, op: str, **kw: Any) -> None:
        sys.stdout.write(json.dumps({"op": op, **kw}, allow_nan=False) + "\n")
        sys.stdout.flush()

    def _emit_progress(self, fraction: float, message: str) -> None:
        self._out("progress", fraction=fraction, message=message)

    def _emit_points(self, key: str, steps: list[float], values: list[float | None]) -> None:
        self._out("points", key=key, steps=steps, values=values)

    def _emit_table(self, key: str, columns: list[str], rows: list[dict[str, Any]]) -> None:
        self._out("table", key=key, columns=columns, rows=rows)

    def _emit_figure(self, key: str, fig: dict[str, Any]) -> None:
        self._out("figure", key=key, fig=fig)

    def _emit_log(self, level: str, message: str) -> None:
        self._out("log", level=level, message=message)

    def _emit_artifact(self, name: str, data: bytes, content_type: str) -> None:
        self._out("artifact", name=name, data=data.decode("utf-8", errors="replace"), content_type=content_type)


def main() -> None:
    from compute.sregym import jobs

    job = sys.argv[1]
    params = json.loads(sys.stdin.read() or "{}")
    rep = JsonLinesReporter()
    loop = asyncio.new_event_loop()
    task = loop.create_task(getattr(jobs, job)(params, rep))
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)  # graceful: the jobs stop their supervisor in finally
    try:
        summary = loop.run_until_complete(task)
        rep._out("summary", summary=summary)
    except asyncio.CancelledError:
        rep._out("summary", summary={"cancelled": True})
    finally:
        loop.close()


if __name__ == "__main__":
    main()

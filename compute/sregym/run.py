"""Entry points: each experiment runs in an isolated runner process (spec "Runner isolation").

The runner is started as a new process-group leader; this function relays its JSON-lines
reporter stream, polls the cancel flag and, in ``finally``, kills the runner's process group by
its PID (never by name). Everything binds 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from compute.core.reporter import Reporter

ROOT = Path(__file__).resolve().parents[2]


def run_isolated(job: str, params: dict[str, Any], reporter: Reporter, max_s: float = 7200.0) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [sys.executable, "-m", "compute.sregym.runner", job],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    lines: queue.Queue[bytes | None] = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    summary: dict[str, Any] = {}
    try:
        proc.stdin.write(json.dumps(params, default=str).encode())
        proc.stdin.close()
        threading.Thread(target=pump, daemon=True).start()
        end = time.monotonic() + max_s
        while time.monotonic() < end:
            if reporter.should_stop():
                os.killpg(proc.pid, signal.SIGTERM)  # graceful first: the runner tears its services down
                summary = {"cancelled": True}
                try:
                    proc.wait(5.0)
                except subprocess.TimeoutExpired:
                    pass
                break
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if line is None:
                break
            msg = json.loads(line)
            op = msg.pop("op")
            if op == "summary":
                summary = msg["summary"]
            elif op == "points":
                reporter.series(msg["key"], msg["steps"], [v if v is not None else float("nan") for v in msg["values"]])
            elif op == "progress":
                reporter.progress(msg["fraction"], msg["message"])
            elif op == "table":
                reporter.table(msg["key"], msg["rows"], msg["columns"])
            elif op == "figure":
                reporter.figure(msg["key"], msg["fig"])
            elif op == "log":
                reporter.log(msg["message"], msg["level"])
            elif op == "artifact":
                reporter.artifact(msg["name"], msg["data"], msg["content_type"])
        proc.wait(10.0)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the runner's whole group, by its PID
        except ProcessLookupError:
            pass
        proc.wait()
        if not summary and proc.returncode not in (0, -signal.SIGKILL, -signal.SIGTERM):
            err.seek(0)
            tail = err.read().decode(errors="replace")[-2000:]
            err.close()
            raise RuntimeError(f"sregym runner ({job}) failed with exit code {proc.returncode}:\n{tail}")
        err.close()
    summary["runner_pid"] = proc.pid
    return summary


def single_incident(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E1: one problem × one agent, live."""
    return run_isolated("incident", params, reporter)


def sweep(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E2: problems × agents × seeds → category heatmap and TTM box plots."""
    return run_isolated("sweep", params, reporter)


def metastability(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E3: the retry-storm phase diagram."""
    return run_isolated("metastability", params, reporter)


def noise_robustness(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E4: detection false-positive rate and localisation accuracy vs noise."""
    return run_isolated("noise_robustness", params, reporter)

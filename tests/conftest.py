"""Shared fixtures: catalog rows, users, and real worker / ASGI server subprocesses on the test database."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def catalog(db):  # type: ignore[no-untyped-def]
    from apps.lab.catalog import sync_catalog

    sync_catalog()


@pytest.fixture
def user(db, django_user_model):  # type: ignore[no-untyped-def]
    return django_user_model.objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def other_user(db, django_user_model):  # type: ignore[no-untyped-def]
    return django_user_model.objects.create_user("bob", password="bob-password-1")


def _subprocess_env() -> dict[str, str]:
    from django.conf import settings

    db = settings.DATABASES["default"]
    url = f"postgres://{db.get('USER') or 'postgres'}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"
    return dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings.test", DATABASE_URL=url, PYTHONUNBUFFERED="1")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A child process in its own process group (so kill() takes its children too)."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log
        self.p = subprocess.Popen(
            args,
            cwd=ROOT,
            env=_subprocess_env(),
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self, sig: int = signal.SIGKILL) -> None:
        try:
            os.killpg(self.p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            self.p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def start_worker(tmp: Path, name: str = "w1", concurrency: int = 2) -> Proc:
    proc = Proc(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            "cpu,gpu",
            "-c",
            str(concurrency),
            "-l",
            "info",
            "-n",
            f"{name}@%h",
            "--without-mingle",
            "--without-gossip",
        ],
        tmp / f"worker-{name}.log",
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        if "ready" in proc.output():
            return proc
        if proc.p.poll() is not None:
            raise RuntimeError("worker exited:\n" + proc.output())
        time.sleep(0.3)
    proc.kill()
    raise RuntimeError("worker did not start:\n" + proc.output())


@pytest.fixture
def purge_queues():  # type: ignore[no-untyped-def]
    from config.celery import app

    app.control.purge()
    yield
    app.control.purge()


@pytest.fixture
def worker(transactional_db, tmp_path, purge_queues):  # type: ignore[no-untyped-def]
    proc = start_worker(tmp_path)
    yield proc
    proc.kill()


@pytest.fixture
def live_asgi(transactional_db, tmp_path):  # type: ignore[no-untyped-def]
    """daphne serving config.asgi on a free port (HTTP + WebSockets), on the test database."""
    port = free_port()
    proc = Proc(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
        tmp_path / "daphne.log",
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        raise RuntimeError("daphne did not start:\n" + proc.output())
    yield f"http://127.0.0.1:{port}"
    proc.kill(signal.SIGTERM)

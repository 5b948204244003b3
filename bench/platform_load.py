"""Load benchmark of the platform in its production configuration (PostgreSQL, Redis, uvicorn workers,
a Celery worker), all on loopback.  Prints markdown for docs/benchmarks/platform.md.

    .venv/bin/python bench/platform_load.py [--seconds 20] [--stream-seconds 60] [--clients 20] [--dispatch-runs 100]

1. API: wrk (Debian's package) against list / retrieve / create → requests/s, p50/p99 latency.
2. Streaming: one run emits 10,000 points/s (values = emission wall-clock time) to N WebSocket
   clients → points delivered per second per client, end-to-end latency p50/p99, points lost
   (each client's snapshot+deltas and a reload from the database against the expected count).
3. Dispatch: POST /api/runs/ → first "running" event on the run's socket, p50/p99 over M runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ENV = dict(
    os.environ,
    DJANGO_SETTINGS_MODULE="config.settings.bench",
    DATABASE_URL="postgres://postgres@127.0.0.1:5432/paperlab_bench",
    REDIS_URL="redis://127.0.0.1:6379/7",
    PAPERLAB_RATE_ANON="10000000/min",
    PAPERLAB_RATE_USER="10000000/min",
    PAPERLAB_RATE_RUN_CREATE="10000000/min",
    PAPERLAB_DATA_DIR=str(Path(tempfile.gettempdir()) / "paperlab-bench-data"),
    PYTHONUNBUFFERED="1",
)
PY = sys.executable


def sh(*args: str, **kw) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return subprocess.run(list(args), cwd=ROOT, env=ENV, check=True, capture_output=True, text=True, **kw)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def setup() -> str:
    subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c", "DROP DATABASE IF EXISTS paperlab_bench"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c", "CREATE DATABASE paperlab_bench"],
        check=True,
        capture_output=True,
    )
    subprocess.run(["redis-cli", "-n", "7", "flushdb"], check=True, capture_output=True)
    sh(PY, "manage.py", "migrate", "-v", "0")
    code = (
        "from django.contrib.auth.models import User; from rest_framework.authtoken.models import Token;"
        "u=User.objects.create_user('bench', password='bench-password-1', is_staff=True);"
        "print(Token.objects.create(user=u).key)"
    )
    return sh(PY, "manage.py", "shell", "-c", code).stdout.strip().splitlines()[-1]


def start(args: list[str], name: str, logdir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        args,
        cwd=ROOT,
        env=ENV,
        stdout=(logdir / f"{name}.log").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            requests.get(url, timeout=1)
            return
        except requests.RequestException:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not come up")


def wrk(url: str, seconds: int, token: str, script: str | None = None, connections: int = 16) -> dict[str, float]:
    args = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-H", f"Authorization: Token {token}"]
    if script:
        args += ["-s", script]
    out = subprocess.run([*args, url], capture_output=True, text=True, check=True).stdout

    def ms(label: str) -> float:
        m = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            return float("nan")
        v, unit = float(m.group(1)), m.group(2)
        return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {"rps": rps, "p50": ms("50%"), "p99": ms("99%"), "errors": int(non2xx.group(1)) if non2xx else 0}


async def ws_client(url: str, done: asyncio.Event, stats: dict) -> None:
    import websockets

    async with websockets.connect(url, origin="http://127.0.0.1", max_size=2**26) as ws:
        while not done.is_set():
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=1.0)
            except TimeoutError:
                continue
            now = time.time()
            msg = json.loads(raw)
            if msg["kind"] == "snapshot":
                stats["snap_seq"] = msg["seq"]
                stats["points"] += sum(s["n"] for s in msg["series"].values())
                if msg["state"]["status"] in ("succeeded", "failed", "cancelled"):
                    done.set()
            elif msg["kind"] == "points":
                for c in msg["data"]:
                    if c["seq"] <= stats.get("snap_seq", 0):
                        continue
                    stats["points"] += len(c["y"])
                    stats["lat"].extend(now - y for y in c["y"][:: max(1, len(c["y"]) // 20)])
                    stats["first"] = stats.get("first") or now
                    stats["last"] = now
            elif msg["kind"] == "state" and msg["data"]["status"] in ("succeeded", "failed", "cancelled"):
                stats["final"] = msg["data"]["status"]
                done.set()


def streaming(base: str, token: str, seconds: int, clients: int) -> dict[str, float]:
    h = {"Authorization": f"Token {token}"}
    steps = seconds * 10
    cfg = {"n_steps": steps, "points_per_step": 1000, "sleep": 0.1, "emit_time": True}
    rid = requests.post(f"{base}/api/runs/", json={"experiment": "demo/counter", "config": cfg}, headers=h).json()["id"]
    ws_url = base.replace("http", "ws") + f"/ws/runs/{rid}/"

    async def main() -> list[dict]:
        done = asyncio.Event()
        stats = [{"points": 0, "lat": []} for _ in range(clients)]
        await asyncio.gather(*(ws_client(ws_url, done, s) for s in stats))
        return stats

    t0 = time.time()
    stats = asyncio.run(main())
    wall = time.time() - t0
    run = requests.get(f"{base}/api/runs/{rid}/", headers=h).json()
    stored = requests.get(f"{base}/api/runs/{rid}/series/", params={"keys": "demo/y"}, headers=h).json()["series"][
        "demo/y"
    ]["n"]
    expected = steps * 1000
    lat = [x for s in stats for x in s["lat"]]
    dur = statistics.median([(s["last"] - s["first"]) for s in stats if s.get("first")])
    return {
        "status": run["status"],
        "expected": expected,
        "stored": stored,
        "min_received": min(s["points"] for s in stats),
        "lost_vs_db": expected - stored,
        "per_client_pts_s": statistics.median([s["points"] for s in stats]) / max(dur, 1e-9),
        "total_pts_s": sum(s["points"] for s in stats) / max(dur, 1e-9),
        "lat_p50_ms": 1000 * pct(lat, 0.5),
        "lat_p99_ms": 1000 * pct(lat, 0.99),
        "wall_s": wall,
    }


def dispatch(base: str, token: str, n: int) -> dict[str, float]:
    import websockets

    h = {"Authorization": f"Token {token}"}

    async def one() -> float:
        t0 = time.perf_counter()
        r = await asyncio.to_thread(
            requests.post, f"{base}/api/runs/", json={"experiment": "demo/counter", "config": {"n_steps": 1}}, headers=h
        )
        rid = r.json()["id"]
        async with websockets.connect(base.replace("http", "ws") + f"/ws/runs/{rid}/", origin="http://127.0.0.1") as ws:
            while True:
                msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
                st = (
                    msg.get("state", {}).get("status")
                    if msg["kind"] == "snapshot"
                    else msg.get("data", {}).get("status")
                )
                if msg["kind"] in ("points", "progress") or st in ("running", "succeeded"):
                    return time.perf_counter() - t0

    async def main() -> list[float]:
        return [await one() for _ in range(n)]

    xs = asyncio.run(main())
    return {
        "n": n,
        "p50_ms": 1000 * pct(xs, 0.5),
        "p99_ms": 1000 * pct(xs, 0.99),
        "mean_ms": 1000 * statistics.mean(xs),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--stream-seconds", type=int, default=60)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--dispatch-runs", type=int, default=100)
    ap.add_argument("--web-workers", type=int, default=2)
    args = ap.parse_args()
    if not shutil.which("wrk"):
        sys.exit("needs wrk: apt-get install wrk")
    token = setup()
    logdir = Path(tempfile.mkdtemp(prefix="paperlab-bench-"))
    port = 8799
    base = f"http://127.0.0.1:{port}"
    web = start(
        [
            PY,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(args.web_workers),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        "web",
        logdir,
    )
    worker = start(
        [PY, "-m", "celery", "-A", "config", "worker", "-Q", "cpu", "-c", "2", "-l", "warning"], "worker", logdir
    )
    try:
        wait_http(f"{base}/api/papers/")
        h = {"Authorization": f"Token {token}"}
        # seed some runs so list/retrieve have data (executed by the worker)
        ids = [
            requests.post(
                f"{base}/api/runs/", json={"experiment": "demo/counter", "preset": "smoke"}, headers=h
            ).json()["id"]
            for _ in range(30)
        ]
        deadline = time.time() + 120
        while (
            time.time() < deadline
            and requests.get(f"{base}/api/runs/{ids[-1]}/", headers=h).json()["status"] != "succeeded"
        ):
            time.sleep(0.5)
        lua = logdir / "post.lua"
        lua.write_text(
            'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = \'{"experiment": "demo/counter", "preset": "smoke"}\'\n'
        )
        api = {
            "list  GET /api/runs/": wrk(f"{base}/api/runs/", args.seconds, token),
            "retrieve GET /api/runs/<id>/": wrk(f"{base}/api/runs/{ids[0]}/", args.seconds, token),
            "create POST /api/runs/": wrk(f"{base}/api/runs/", args.seconds, token, script=str(lua)),
        }
        subprocess.run(
            ["redis-cli", "-n", "7", "del", "cpu"], capture_output=True
        )  # drop the queued flood before streaming
        sh(
            PY,
            "manage.py",
            "shell",
            "-c",
            "from apps.lab.models import Run; Run.objects.filter(status='queued').update(status='cancelled')",
        )
        stream = streaming(base, token, args.stream_seconds, args.clients)
        disp = dispatch(base, token, args.dispatch_runs)
    finally:
        stop(web)
        stop(worker)
    print(
        f"\n## Platform load ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, uvicorn ×{args.web_workers}, Celery ×2, PostgreSQL, Redis)\n"
    )
    print("| endpoint | requests/s | p50 ms | p99 ms | non-2xx |\n|---|---|---|---|---|")
    for name, r in api.items():
        print(f"| {name} | {r['rps']:.0f} | {r['p50']:.1f} | {r['p99']:.1f} | {r['errors']} |")
    print(
        f"\nStreaming: one run emitting 10,000 points/s for {args.stream_seconds} s to {args.clients} WebSocket clients (status {stream['status']}):\n"
    )
    print(
        "| points expected | stored in DB | fewest received by a client | lost (expected − stored) | points/s per client | points/s all clients | latency p50 ms | latency p99 ms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {stream['expected']} | {stream['stored']} | {stream['min_received']} | {stream['lost_vs_db']} | {stream['per_client_pts_s']:.0f} | {stream['total_pts_s']:.0f} | {stream['lat_p50_ms']:.0f} | {stream['lat_p99_ms']:.0f} |"
    )
    print(
        f"\nDispatch: POST /api/runs/ → first event of the running run on its socket, over {disp['n']} runs: p50 {disp['p50_ms']:.0f} ms, p99 {disp['p99_ms']:.0f} ms, mean {disp['mean_ms']:.0f} ms."
    )
    print("\nlogs:", logdir)


if __name__ == "__main__":
    main()

"""One microservice process: ``python -m compute.sregym.app.service --config PATH``.

Capacity model (spec §2): a handler takes one of ``c`` semaphore slots and sleeps for the service
time S (no CPU burn), so μ = c/S. At most ``queue_limit`` requests wait for a slot (503 beyond).
Downstream calls use a per-hop timeout T_o and up to R retries with optional exponential back-off;
timed-out requests are not cancelled server-side. The process prints ``PORT <n>`` once bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from compute.sregym.app.httpio import HttpError, request, serve

# route → downstream calls (service, path) and local data-store work; topology of spec §2
ROUTES: dict[str, dict[str, tuple[list[tuple[str, str]], str]]] = {
    "gateway": {
        "/browse": ([("catalog", "/item"), ("recommender", "/reco")], ""),
        "/cart": ([("cart", "/view")], ""),
        "/checkout": ([("cart", "/checkout")], ""),
    },
    "catalog": {"/item": ([], "db")},
    "recommender": {"/reco": ([], "")},
    "cart": {"/view": ([], "kv"), "/checkout": ([("checkout", "/pay")], "db")},
    "checkout": {"/pay": ([("payment", "/charge")], "disk")},
    "payment": {"/charge": ([], "")},
    "api": {"/work": ([], "")},  # the single-service system of the metastability explorer (E3)
}
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ServiceError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Service:
    """State of one replica: config, counters, fault knobs set by the (token-protected) admin API."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg = cfg
        self.name = cfg["name"]
        self.routes = ROUTES[cfg.get("kind", self.name)]
        self.sem = asyncio.Semaphore(int(cfg.get("c", 8)))
        self.pool = asyncio.Semaphore(int(cfg.get("pool_size", 8)))
        self.kv: OrderedDict[int, str] = OrderedDict()
        self.faults: dict[str, float] = {}
        self.leaked_pool = 0
        self.ballast: list[bytearray] = []
        self.rng = random.Random(int(cfg.get("seed", 0)) + os.getpid())
        self.c = dict.fromkeys(("requests", "errors", "rejected", "calls", "attempts", "inflight", "queue"), 0)
        self.c["pool_waiters"] = 0
        self.hist = [0] * (len(BUCKETS) + 1)
        self.log_f = open(cfg["log_path"], "a", buffering=1) if cfg.get("log_path") else None  # noqa: SIM115
        self.span_buf: list[str] = []
        self.auth_ok = True
        if cfg.get("db_path"):
            secret = Path(cfg["secret_path"]).read_text().strip() if cfg.get("secret_path") else ""
            self.auth_ok = cfg.get("db_password", "") == secret

    # -- observability -------------------------------------------------------------------------
    def log(self, level: str, msg: str, **kw: Any) -> None:
        if self.log_f:
            rec = {"ts": time.time(), "service": self.name, "pid": os.getpid(), "level": level, "msg": msg, **kw}
            self.log_f.write(json.dumps(rec) + "\n")

    def metrics(self) -> str:
        lab = f'service="{self.name}",pid="{os.getpid()}"'
        lines = [f"svc_{k}_total{{{lab}}} {self.c[k]}" for k in ("requests", "errors", "rejected", "calls", "attempts")]
        lines += [f"svc_{k}{{{lab}}} {self.c[k]}" for k in ("inflight", "queue", "pool_waiters")]
        cum = 0
        for le, n in zip((*BUCKETS, "+Inf"), self.hist, strict=True):
            cum += n
            lines.append(f'svc_latency_seconds_bucket{{{lab},le="{le}"}} {cum}')
        rss = 0
        try:
            rss = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
        lines.append(f"svc_rss_bytes{{{lab}}} {rss}")
        lines.append(f"svc_kv_keys{{{lab}}} {len(self.kv)}")
        lines.append(f'svc_info{{{lab},version="{self.cfg.get("version", 1)}"}} 1')
        return "\n".join(lines) + "\n"

    def span(self, trace: str, parent: str, span_id: str, path: str, t0: float, status: int) -> None:
        if self.cfg.get("span_path"):
            rec = [trace, span_id, parent, self.name, path, round(t0, 4), round(time.time() - t0, 4), status]
            self.span_buf.append(json.dumps(rec))

    async def flush_loop(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            if self.span_buf:
                buf, self.span_buf = self.span_buf, []
                with open(self.cfg["span_path"], "a") as f:
                    f.write("\n".join(buf) + "\n")
            leak = float(self.cfg.get("leak_mb_per_s", 0))
            if leak > 0 and len(self.ballast) < 400:  # bounded: at most 400 × leak/2 MB
                self.ballast.append(bytearray(int(leak * 2**20 / 2)))

    # -- work ----------------------------------------------------------------------------------
    async def call(self, dep: str, path: str, trace: str, span_id: str) -> bytes:
        """Downstream call with per-hop timeout T_o, R retries and optional back-off (2^k · b)."""
        port = int(self.cfg["downstream"][dep])
        retries, timeout = int(self.cfg.get("retries", 0)), float(self.cfg.get("timeout_ms", 1000)) / 1000
        backoff = float(self.cfg.get("backoff_ms", 0)) / 1000
        self.c["calls"] += 1
        err = ""
        for k in range(retries + 1):
            self.c["attempts"] += 1
            try:
                hdr = {"traceparent": f"00-{trace}-{span_id}-01"}
                status, out = await request(port, "GET", path, headers=hdr, timeout=timeout)
                if status < 500:
                    return out
                err = f"{dep}{path} returned {status}: {out[:160].decode(errors='replace')}"
            except HttpError as exc:
                err = f"{dep}{path}: {exc}"
            if k < retries and backoff > 0:
                await asyncio.sleep(backoff * 2**k * (0.5 + self.rng.random()))
        raise ServiceError(504 if "timeout" in err else 502, err)

    async def db(self, sql: str) -> None:
        if not self.auth_ok:
            raise ServiceError(500, 'FATAL: password authentication failed for user "shop"')
        self.c["pool_waiters"] += 1
        try:
            await asyncio.wait_for(self.pool.acquire(), float(self.cfg.get("pool_timeout_ms", 200)) / 1000)
        except TimeoutError as exc:
            raise ServiceError(500, "connection pool exhausted: timeout waiting for a free connection") from exc
        finally:
            self.c["pool_waiters"] -= 1
        try:
            await asyncio.to_thread(_sqlite_read, self.cfg["db_path"], sql)
            await asyncio.sleep(float(self.cfg.get("db_ms", 5)) / 1000)
        except sqlite3.OperationalError as exc:
            raise ServiceError(500, f"sqlite: {exc}") from exc
        finally:
            self.pool.release()

    async def kv_get(self) -> None:
        key = self.rng.randrange(200)
        maxmem = int(self.faults.get("kv_maxmemory", self.cfg.get("kv_maxmemory", 1000)))
        if key in self.kv:
            self.kv.move_to_end(key)
            return
        await self.db("SELECT name FROM items WHERE id = 1")  # miss: rebuild from the data store
        await asyncio.sleep(float(self.cfg.get("miss_ms", 120)) / 1000)
        self.kv[key] = "x" * 64
        while len(self.kv) > maxmem:
            self.kv.popitem(last=False)
            self.c.setdefault("evictions", 0)
            self.c["evictions"] += 1

    def disk_write(self) -> None:
        sandbox = Path(self.cfg["sandbox"])
        used = sum(e.stat().st_size for e in os.scandir(sandbox) if e.is_file())
        if used + 256 > float(self.cfg.get("disk_cap_kb", 512)) * 1024:
            raise ServiceError(500, f"OSError: [Errno 28] No space left on device: '{sandbox}/orders.log'")
        log = sandbox / "orders.log"
        if log.exists() and log.stat().st_size > 64 * 1024:
            log.unlink()
        with open(log, "a") as f:
            f.write(f"{time.time():.3f} order ok\n")

    async def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        path = path.split("?", 1)[0]
        if path == "/healthz":
            return 200, json.dumps({"ok": True, "service": self.name, "version": self.cfg.get("version")}).encode()
        if path == "/metrics":
            return 200, self.metrics().encode()
        if path.startswith("/admin/"):
            if headers.get("x-admin-token") != self.cfg.get("admin_token") or not self.cfg.get("admin_token"):
                return 403, b'{"error": "forbidden"}'
            return 200, json.dumps(self.admin(path, json.loads(body or b"{}"))).encode()
        if path not in self.routes:
            return 404, b'{"error": "no route"}'
        if self.c["queue"] >= int(self.cfg.get("queue_limit", 128)):
            self.c["rejected"] += 1
            self.c["requests"] += 1
            self.c["errors"] += 1
            return 503, b'{"error": "overloaded: request queue full"}'
        tp = headers.get("traceparent", "").split("-")
        trace = tp[1] if len(tp) == 4 else f"{self.rng.getrandbits(128):032x}"
        parent = tp[2] if len(tp) == 4 else ""
        span_id = f"{self.rng.getrandbits(64):016x}"
        t0 = time.time()
        self.c["queue"] += 1
        status, out = 200, b'{"ok": true}'
        async with self.sem:
            self.c["queue"] -= 1
            self.c["inflight"] += 1
            try:
                await asyncio.sleep((float(self.cfg.get("service_ms", 20)) + self.faults.get("extra_ms", 0)) / 1000)
                hog = self.faults.get("cpu_hog_ms", 0)
                if hog:
                    end = time.perf_counter() + min(hog, 200) / 1000
                    while time.perf_counter() < end:  # bounded CPU burn (fault), blocks this process only
                        pass
                err_rate = float(self.cfg.get("error_rate", 0))
                if err_rate and self.rng.random() < err_rate:
                    raise ServiceError(
                        500, f"unhandled exception in handler: KeyError('sku') (build v{self.cfg.get('version')})"
                    )
                deps, store = self.routes[path]
                if store == "db":
                    await self.db("SELECT name, price FROM items WHERE id = 1")
                elif store == "kv":
                    await self.kv_get()
                elif store == "disk":
                    self.disk_write()
                if deps:
                    await asyncio.gather(*(self.call(d, p, trace, span_id) for d, p in deps))
            except ServiceError as exc:
                status, out = exc.status, json.dumps({"error": str(exc)}).encode()
                self.log("error", str(exc), path=path, trace_id=trace)
            except Exception as exc:  # noqa: BLE001 - a crashing handler is a 500, as in any web framework
                status, out = 500, json.dumps({"error": repr(exc)}).encode()
                self.log("error", repr(exc), path=path, trace_id=trace)
            finally:
                self.c["inflight"] -= 1
        dt = time.time() - t0
        self.c["requests"] += 1
        self.c["errors"] += status >= 500
        self.hist[next((i for i, b in enumerate(BUCKETS) if dt <= b), len(BUCKETS))] += 1
        self.span(trace, parent, span_id, path, t0, status)
        return status, out

    def admin(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """Fault knobs (only the injector holds the token): extra_ms, cpu_hog_ms, kv_maxmemory, pool_leak, log."""
        if path == "/admin/fault":
            for k, v in body.items():
                if k == "pool_leak":
                    for _ in range(int(v)):
                        if not self.pool.locked():
                            self.pool._value -= 1  # a leaked connection: acquired and never released
                            self.leaked_pool += 1
                elif v is None:
                    self.faults.pop(k, None)
                else:
                    self.faults[k] = float(v)
        elif path == "/admin/log":
            self.log(body.get("level", "error"), body.get("msg", ""), benign=True)
        return {"faults": self.faults, "leaked_pool": self.leaked_pool}


def _sqlite_read(path: str, sql: str) -> None:
    con = sqlite3.connect(path, timeout=0.15)
    try:
        con.execute(sql).fetchall()
    finally:
        con.close()


async def main(cfg_path: str) -> None:
    cfg = json.loads(Path(cfg_path).read_text())
    svc = Service(cfg)
    if cfg.get("crash_on_start"):
        svc.log("fatal", str(cfg["crash_on_start"]))
        print(f"FATAL {cfg['crash_on_start']}", file=sys.stderr, flush=True)
        sys.exit(1)
    server, port = await serve(svc.handle)
    svc.log("info", f"listening on 127.0.0.1:{port}", version=cfg.get("version"))
    print(f"PORT {port}", flush=True)
    flusher = asyncio.create_task(svc.flush_loop())
    async with server:
        await server.serve_forever()
    flusher.cancel()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    asyncio.run(main(ap.parse_args().config))

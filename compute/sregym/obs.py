"""Observability: Prometheus-format metrics scraped every second, JSON logs and W3C-traceparent spans, all in SQLite.

Per service and second: rps, error rate, p50/p95 (from histogram-bucket deltas), queue depth,
in-flight, pool waiters, ready replicas, RSS and **amplification** = downstream attempts / calls.
The load generator's client view is stored as the pseudo-service ``client``.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sqlite3
from pathlib import Path
from typing import Any

from compute.sregym.app.httpio import HttpError, request
from compute.sregym.app.service import BUCKETS
from compute.sregym.control import Supervisor, stop_task
from compute.sregym.load import LoadGen

LINE = re.compile(r'^(\w+)\{service="[^"]*",pid="(\d+)"(?:,le="([^"]+)")?(?:,version="(\d+)")?\} (\S+)$')
COLUMNS = [
    "rps",
    "err",
    "p50",
    "p95",
    "queue",
    "inflight",
    "pool_waiters",
    "amplification",
    "ready",
    "rss_mb",
    "version",
]


def parse_metrics(text: str) -> dict[str, Any]:
    """Prometheus text → {name: value} with the latency histogram as a list of cumulative counts."""
    out: dict[str, Any] = {"buckets": []}
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        name, _pid, le, version, value = m.groups()
        if le is not None:
            out["buckets"].append(float(value))
        elif version is not None:
            out["version"] = int(version)
        else:
            out[name] = float(value)
    return out


def quantile_from_buckets(counts: list[float], q: float) -> float:
    """Quantile of a histogram (non-cumulative counts over BUCKETS, last = +Inf), linear within a bucket."""
    total = sum(counts)
    if total <= 0:
        return float("nan")
    target, acc, lo = q * total, 0.0, 0.0
    for i, n in enumerate(counts):
        hi = BUCKETS[i] if i < len(BUCKETS) else BUCKETS[-1] * 2
        if acc + n >= target and n > 0:
            return lo + (hi - lo) * (target - acc) / n
        acc += n
        lo = hi
    return lo


class Observer:
    """Scrapes the supervisor's replicas each second and ingests logs/spans into one SQLite file."""

    def __init__(self, sup: Supervisor, db_path: Path, client: LoadGen | None = None) -> None:
        self.sup, self.client = sup, client
        self.db = sqlite3.connect(db_path)
        self.db.execute(f"CREATE TABLE metrics (t REAL, service TEXT, {', '.join(c + ' REAL' for c in COLUMNS)})")
        self.db.execute("CREATE TABLE logs (t REAL, service TEXT, level TEXT, msg TEXT)")
        self.db.execute(
            "CREATE TABLE spans (trace TEXT, span TEXT, parent TEXT, service TEXT, path TEXT, t REAL, dur REAL, status INT)"
        )
        self.prev: dict[int, dict[str, Any]] = {}
        self.offsets: dict[str, int] = {}
        self.t_prev = sup.now()
        self.task: asyncio.Task | None = None
        self.stopping = False
        self.latest: dict[str, dict[str, float]] = {}
        self.mono_to_wall = 0.0

    def start(self) -> None:
        self.task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        self.stopping = True
        if self.task:
            await stop_task(self.task)

    async def _loop(self) -> None:
        while not self.stopping:
            await asyncio.sleep(1.0)
            try:
                await self.scrape()
                self.ingest()
            except (sqlite3.Error, OSError, ValueError, IndexError, KeyError) as exc:
                self.sup.event("obs_error", "obs", str(exc))

    async def _metrics_of(self, port: int) -> dict[str, Any] | None:
        try:
            status, out = await request(port, "GET", "/metrics", timeout=0.5)
            return parse_metrics(out.decode()) if status == 200 else None
        except HttpError:
            return None

    async def scrape(self) -> None:
        t = self.sup.now()
        dt = max(1e-3, t - self.t_prev)
        self.t_prev = t
        rows = []
        for name, st in self.sup.services.items():
            reps = [r for r in st.replicas if r.proc.returncode is None]
            got = await asyncio.gather(*(self._metrics_of(r.port) for r in reps))
            d = dict.fromkeys(("svc_requests_total", "svc_errors_total", "svc_calls_total", "svc_attempts_total"), 0.0)
            hist = [0.0] * (len(BUCKETS) + 1)
            gauges = dict.fromkeys(("svc_queue", "svc_inflight", "svc_pool_waiters", "svc_rss_bytes"), 0.0)
            for r, m in zip(reps, got, strict=True):
                if m is None:
                    continue
                p = self.prev.get(r.proc.pid, {"buckets": [0.0] * len(m["buckets"])})
                for k in d:
                    d[k] += m.get(k, 0.0) - p.get(k, 0.0)
                cum, pcum = m["buckets"], p["buckets"]
                for i in range(len(hist)):
                    hist[i] += (cum[i] - (cum[i - 1] if i else 0)) - (pcum[i] - (pcum[i - 1] if i else 0))
                for k in gauges:
                    gauges[k] += m.get(k, 0.0)
                self.prev[r.proc.pid] = m
            n = d["svc_requests_total"]
            row = {
                "rps": n / dt,
                "err": d["svc_errors_total"] / n if n > 0 else 0.0,
                "p50": quantile_from_buckets(hist, 0.5),
                "p95": quantile_from_buckets(hist, 0.95),
                "queue": gauges["svc_queue"],
                "inflight": gauges["svc_inflight"],
                "pool_waiters": gauges["svc_pool_waiters"],
                "amplification": d["svc_attempts_total"] / d["svc_calls_total"] if d["svc_calls_total"] > 0 else 1.0,
                "ready": float(sum(1 for r in reps if r.ready)),
                "rss_mb": gauges["svc_rss_bytes"] / 2**20,
                "version": float(st.config["version"]),
            }
            rows.append((t, name, row))
        if self.client is not None:
            c = self.client.window(t - 4, t - 3)  # a lag of T_o so the second's outcomes are known
            rows.append((t - 3.5, "client", {"rps": c["rps"], "err": 1 - c["success"] if c["submitted"] else 0.0,
                                               "p95": c["p95"], "amplification": c["amplification"]}))  # fmt: skip
        for tt, name, row in rows:
            vals = [
                None if (isinstance(row.get(k), float) and not math.isfinite(row[k])) else row.get(k) for k in COLUMNS
            ]
            self.db.execute(f"INSERT INTO metrics VALUES (?, ?, {', '.join('?' * len(COLUMNS))})", (tt, name, *vals))
            self.latest[name] = {"t": tt, **row}
        self.db.commit()

    def ingest(self) -> None:
        """Tail every service's JSON log and span file into SQLite (timestamps mapped to the run clock)."""
        import time

        self.mono_to_wall = time.time() - self.sup.now()
        for path in sorted((self.sup.run_dir / "logs").glob("*")):
            off = self.offsets.get(str(path), 0)
            with open(path) as f:
                f.seek(off)
                chunk = f.read()
            end = chunk.rfind("\n") + 1
            self.offsets[str(path)] = off + end
            for line in chunk[:end].splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if path.suffix == ".jsonl":
                    t = rec["ts"] - self.mono_to_wall
                    self.db.execute(
                        "INSERT INTO logs VALUES (?, ?, ?, ?)", (t, rec["service"], rec["level"], rec["msg"])
                    )
                else:
                    rec[5] = rec[5] - self.mono_to_wall
                    self.db.execute("INSERT INTO spans VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rec)
        self.db.commit()

    # -- queries (used by tools, oracles and agents) ---------------------------------------------
    def series(self, service: str, column: str, since: float = 0.0, until: float = 1e18) -> list[tuple[float, float]]:
        q = f"SELECT t, {column} FROM metrics WHERE service = ? AND t >= ? AND t < ? ORDER BY t"
        return [(t, v) for t, v in self.db.execute(q, (service, since, until)) if v is not None]

    def window(self, service: str, since: float, until: float = 1e18) -> dict[str, float]:
        """Mean rps/err/amplification, max p95/queue/pool waiters, min ready over [since, until)."""
        q = (
            "SELECT AVG(rps), AVG(err), MAX(p95), MAX(queue), MAX(pool_waiters), MAX(amplification), MIN(ready), "
            "COUNT(*) FROM metrics WHERE service = ? AND t >= ? AND t < ?"
        )
        r = self.db.execute(q, (service, since, until)).fetchone()
        keys = ["rps", "err", "p95", "queue", "pool_waiters", "amplification", "ready", "n"]
        return {k: (float(v) if v is not None else float("nan")) for k, v in zip(keys, r, strict=True)}

    def logs(
        self, service: str | None = None, since: float = 0.0, level: str | None = None, limit: int = 50
    ) -> list[dict]:
        q, args = "SELECT t, service, level, msg FROM logs WHERE t >= ?", [since]
        if service:
            q, args = q + " AND service = ?", [*args, service]
        if level:
            q, args = q + " AND level = ?", [*args, level]
        q += " ORDER BY t DESC LIMIT ?"
        rows = self.db.execute(q, (*args, limit)).fetchall()
        return [{"t": round(t, 2), "service": s, "level": lv, "msg": m} for t, s, lv, m in rows]

    def traces(self, since: float = 0.0, errors_only: bool = True, limit: int = 5) -> list[list[dict]]:
        """The most recent traces (optionally only those with a failed span) as lists of spans."""
        q = "SELECT DISTINCT trace FROM spans WHERE t >= ?" + (" AND status >= 500" if errors_only else "")
        ids = [r[0] for r in self.db.execute(q + " ORDER BY t DESC LIMIT ?", (since, limit))]
        out = []
        for tid in ids:
            rows = self.db.execute(
                "SELECT span, parent, service, path, dur, status FROM spans WHERE trace = ? ORDER BY t", (tid,)
            )
            out.append(
                [dict(zip(("span", "parent", "service", "path", "dur", "status"), r, strict=True)) for r in rows]
            )
        return out

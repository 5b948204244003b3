"""Ambient noise (spec §2 "Noise"): SREGym's pattern scaled down, keeping its ratios.

SREGym runs two noise experiments every 300 s, each lasting 120 s (a 0.4 duty ratio). Here a cycle
lasts ``period_s`` (30–60 s) and each experiment ``0.4 · period_s``: ``low`` runs one experiment per
60 s cycle, ``high`` two per 30 s cycle. Experiments: latency blips (200 ± 50 ms), 25% loss bursts,
unrelated restarts, benign error logs, ghost metric spikes (a short extra-load burst) and cron jobs
(a periodic data-store scan).
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from typing import Any

from compute.sregym.app.topology import SERVICES
from compute.sregym.control import stop_task

LEVELS = {"off": (0, 60.0), "low": (1, 60.0), "high": (2, 30.0)}  # experiments per cycle, cycle period (s)
DUTY = 120 / 300  # SREGym: 120 s experiments every 300 s
KINDS = ["latency_blip", "loss_burst", "unrelated_restart", "benign_logs", "ghost_spike", "cron_job"]


class Noise:
    def __init__(self, env: Any, level: str, seed: int, avoid: set[str] | None = None) -> None:
        self.env, self.level = env, level
        self.rng = random.Random(seed + 7919)
        self.avoid = avoid or set()
        self.task: asyncio.Task | None = None
        self.active: list[asyncio.Task] = []
        self.log: list[dict[str, Any]] = []
        self.stopping = False

    def start(self) -> None:
        if LEVELS[self.level][0] > 0:
            self.task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        self.stopping = True
        for t in [self.task, *self.active]:
            if t and not t.done():
                await stop_task(t)
        for name in SERVICES:  # remove every noise toxic
            try:
                await self.env.sup.set_toxics(name, {})
            except Exception:  # noqa: BLE001
                pass
        gen = self.env.gen
        gen.rate = self.env.base_rate

    async def _loop(self) -> None:
        n, period = LEVELS[self.level]
        while not self.stopping:  # bounded by the conductor, which stops it
            for _ in range(n):
                kind = self.rng.choice(KINDS)
                target = self.rng.choice([s for s in SERVICES if s not in self.avoid] or SERVICES)
                self.active.append(asyncio.create_task(self._experiment(kind, target, DUTY * period)))
            await asyncio.sleep(period)

    async def _experiment(self, kind: str, target: str, duration: float) -> None:
        env = self.env
        self.log.append({"t": round(env.sup.now(), 2), "kind": kind, "service": target, "duration": duration})
        env.sup.event("noise", target, kind)
        if kind == "latency_blip":
            await env.sup.set_toxics(target, {"latency_ms": 200, "jitter_ms": 50})
            await asyncio.sleep(duration)
            await env.sup.set_toxics(target, {})
        elif kind == "loss_burst":
            await env.sup.set_toxics(target, {"loss": 0.25})
            await asyncio.sleep(min(duration, 3.0))  # a burst
            await env.sup.set_toxics(target, {})
        elif kind == "unrelated_restart":
            await env.sup.restart(target)
        elif kind == "benign_logs":
            for _ in range(int(duration)):
                msg = self.rng.choice([
                    "deprecated config key 'timeoutMillis' ignored",
                    "TLS session ticket key rotated",
                    "health check from unknown probe 10.0.0.7 rejected",
                ])  # fmt: skip
                await env.sup.admin(target, "/admin/log", {"level": "error", "msg": msg})
                await asyncio.sleep(1.0)
        elif kind == "ghost_spike":
            env.gen.rate = env.base_rate * 1.8
            await asyncio.sleep(min(duration, 4.0))
            env.gen.rate = env.base_rate
        elif kind == "cron_job":
            end = env.sup.now() + min(duration, 6.0)
            while env.sup.now() < end:
                await asyncio.to_thread(_scan, str(env.sup.run_dir / "shop.db"))
                await asyncio.sleep(0.5)


def _scan(path: str) -> None:
    con = sqlite3.connect(path, timeout=1.0)
    try:
        con.execute("SELECT COUNT(*), SUM(price) FROM items a JOIN items b ON a.id % 20 = b.id % 20").fetchall()
    finally:
        con.close()

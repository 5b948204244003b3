"""Open-loop Poisson load generator (asyncio; replaces wrk2, spec §2 "Load").

Requests arrive at rate λ regardless of completions (open loop), each with a client timeout T_o
and up to R retries. Outcomes are binned by submission second: ``goodput(t)`` = fraction of the
requests submitted in second t that eventually succeed; ``amplification`` = attempts / requests.
Bounded: it runs for a given duration and caps in-flight requests.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import defaultdict
from typing import Any

from compute.sregym.app.httpio import HttpError, request

MAX_INFLIGHT = 4000


class LoadGen:
    def __init__(
        self,
        port: int,
        rate: float,
        mix: list[tuple[str, float]] | None = None,
        timeout_ms: float = 2000.0,
        retries: int = 0,
        backoff_ms: float = 0.0,
        seed: int = 0,
    ) -> None:
        self.port, self.rate = port, float(rate)
        self.mix = mix or [("/work", 1.0)]
        self.timeout, self.retries, self.backoff = timeout_ms / 1000, int(retries), backoff_ms / 1000
        self.rng = random.Random(seed)
        self.bins: dict[int, dict[str, Any]] = defaultdict(lambda: {"n": 0, "ok": 0, "attempts": 0, "lat": []})
        self.t0 = time.monotonic()
        self.inflight = 0
        self.running = False
        self.tasks: set[asyncio.Task] = set()

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _path(self) -> str:
        u, acc = self.rng.random(), 0.0
        for path, w in self.mix:
            acc += w
            if u <= acc:
                return path
        return self.mix[-1][0]

    async def one(self, sec: int, path: str) -> None:
        b = self.bins[sec]
        b["n"] += 1
        start = time.monotonic()
        try:
            for k in range(self.retries + 1):
                b["attempts"] += 1
                try:
                    status, _ = await request(self.port, "GET", path, timeout=self.timeout)
                    if status < 500:
                        b["ok"] += 1
                        b["lat"].append(time.monotonic() - start)
                        return
                except HttpError:
                    pass
                if k < self.retries and self.backoff > 0:
                    await asyncio.sleep(self.backoff * 2**k * (0.5 + self.rng.random()))
        finally:
            self.inflight -= 1

    async def run(self, duration: float) -> None:
        """Poisson arrivals for ``duration`` seconds (rate may change while running)."""
        self.running = True
        end = self.now() + duration
        t = self.now()
        while self.running and t < end:
            t += self.rng.expovariate(self.rate) if self.rate > 0 else 0.1
            delay = t - self.now()
            if delay > 0:
                await asyncio.sleep(delay)
            if self.rate <= 0 or self.inflight >= MAX_INFLIGHT:
                continue
            self.inflight += 1
            task = asyncio.create_task(self.one(int(self.now()), self._path()))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        self.running = False

    async def drain(self, timeout: float = 10.0) -> None:
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=timeout)

    def stop(self) -> None:
        self.running = False

    def second(self, sec: int) -> dict[str, float]:
        """Client-side stats of the requests submitted in second ``sec``."""
        b = self.bins.get(sec, {"n": 0, "ok": 0, "attempts": 0, "lat": []})
        lat = sorted(b["lat"])
        return {
            "submitted": b["n"],
            "goodput": b["ok"] / b["n"] if b["n"] else float("nan"),
            "amplification": b["attempts"] / b["n"] if b["n"] else float("nan"),
            "p95": lat[int(0.95 * (len(lat) - 1))] if lat else float("nan"),
        }

    def window(self, t_from: float, t_to: float) -> dict[str, float]:
        """Aggregate client stats over submission seconds [t_from, t_to)."""
        n = ok = att = 0
        lat: list[float] = []
        for s in range(int(t_from), int(t_to)):
            b = self.bins.get(s)
            if b:
                n, ok, att = n + b["n"], ok + b["ok"], att + b["attempts"]
                lat += b["lat"]
        lat.sort()
        span = max(1e-9, int(t_to) - int(t_from))
        return {
            "submitted": n,
            "rps": n / span,
            "success": ok / n if n else 0.0,
            "amplification": att / n if n else 0.0,
            "p95": lat[int(0.95 * (len(lat) - 1))] if lat else float("inf"),
        }

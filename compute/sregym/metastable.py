"""Retry-storm metastability: closed form and the live trigger experiment (spec "Metastability model", E3).

Capacity μ = c/S. In the low state P(timeout) ≈ 0 and the offered load is λ; in the high state
every attempt times out (or is shed) and the offered load is λ(1+R). The system is

* stable       iff λ(1+R) < μ   (a trigger's backlog drains),
* metastable   iff λ < μ < λ(1+R) (a trigger tips it into a self-sustaining high state),
* overloaded   iff μ ≤ λ           (collapsed even without a trigger).

The live version runs one ``api`` service process (c slots, service time S, bounded queue) and an
open-loop client with timeout T_o and R retries; the trigger adds ``trigger_ms`` to the service
time for ``trigger_s`` seconds (capacity drops to c/(S + trigger)).
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compute.sregym.control import Supervisor
from compute.sregym.load import LoadGen


def classify(lam: float, mu: float, retries: int) -> str:
    """'stable' | 'metastable' | 'overloaded' from λ, μ = c/S and R (closed form)."""
    if mu <= lam:
        return "overloaded"
    return "metastable" if mu < lam * (1 + retries) else "stable"


def boundary_rate(mu: float, retries: int) -> float:
    """The λ at which λ(1+R) = μ: above it (and below μ) a trigger causes a persistent collapse."""
    return mu / (1 + retries)


@dataclass
class TriggerConfig:
    rate: float = 100.0  # λ, requests/s
    retries: int = 3  # R
    timeout_ms: float = 300.0  # T_o
    backoff_ms: float = 0.0
    c: int = 8
    service_ms: float = 50.0  # S → μ = c/S = 160 rps
    queue_limit: int = 64
    trigger_ms: float = 200.0
    warmup_s: float = 4.0
    trigger_s: float = 10.0
    after_s: float = 20.0
    seed: int = 0

    @property
    def mu(self) -> float:
        return self.c / (self.service_ms / 1000)


async def trigger_run(cfg: TriggerConfig, run_dir: Path | None = None, on_second: Any = None) -> dict[str, Any]:
    """Warm-up → trigger (service time +trigger_ms) → removal; per-second client goodput and amplification."""
    tmp = tempfile.TemporaryDirectory(prefix="sregym-e3-") if run_dir is None else None
    run_dir = Path(tmp.name) if tmp else Path(run_dir)
    sup = Supervisor(run_dir)
    svc = {"name": "api", "kind": "api", "c": cfg.c, "service_ms": cfg.service_ms, "queue_limit": cfg.queue_limit}
    try:
        await sup.start({"api": svc})
        port = sup.services["api"].replicas[0].port
        gen = LoadGen(
            port, cfg.rate, timeout_ms=cfg.timeout_ms, retries=cfg.retries, backoff_ms=cfg.backoff_ms, seed=cfg.seed
        )
        total = cfg.warmup_s + cfg.trigger_s + cfg.after_s
        driver = asyncio.create_task(gen.run(total))
        t_on, t_off = cfg.warmup_s, cfg.warmup_s + cfg.trigger_s
        await asyncio.sleep(t_on - gen.now())
        await sup.admin("api", "/admin/fault", {"extra_ms": cfg.trigger_ms})
        await asyncio.sleep(max(0.0, t_off - gen.now()))
        await sup.admin("api", "/admin/fault", {"extra_ms": None})
        reported = 0
        while not driver.done():
            await asyncio.sleep(0.5)
            done_sec = int(gen.now() - (cfg.retries + 1) * cfg.timeout_ms / 1000) - 1
            while on_second and reported < done_sec:
                on_second(reported, gen.second(reported))
                reported += 1
        await gen.drain(timeout=(cfg.retries + 1) * cfg.timeout_ms / 1000 + 2)
        secs = [gen.second(s) for s in range(int(total))]
        while on_second and reported < int(total):
            on_second(reported, secs[reported])
            reported += 1
    finally:
        await sup.stop()
        if tmp:
            tmp.cleanup()
    return summarize(secs, t_on, t_off, cfg)


def summarize(secs: list[dict[str, float]], t_on: float, t_off: float, cfg: TriggerConfig) -> dict[str, Any]:
    """Goodput before/after, how long goodput stays < 50% after removal, and time to recover (≥ 90%)."""
    good = [s["goodput"] for s in secs]
    ion, ioff = int(t_on), int(t_off)
    pre = [g for g in good[1:ion] if g == g]
    post = good[ioff:]
    low_for = 0
    for g in post:
        if g == g and g < 0.5:
            low_for += 1
        else:
            break
    recover = next((i for i in range(len(post)) if all(x >= 0.9 for x in post[i : i + 3] if x == x)), None)
    tail = [g for g in good[-5:] if g == g]
    final = sum(tail) / len(tail) if tail else 0.0
    return {
        "goodput_before": sum(pre) / len(pre) if pre else 0.0,
        "goodput_end": final,
        "low_seconds_after_removal": low_for,
        "recovery_s": float(recover) if recover is not None else None,
        "stuck": final < 0.5,
        "amplification_end": [s["amplification"] for s in secs[-5:]],
        "predicted": classify(cfg.rate, cfg.mu, cfg.retries),
        "goodput": good,
    }

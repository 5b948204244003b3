"""The key metastability test: R = 3 stays collapsed after the trigger is removed, R = 0 recovers.

Scaled for the test budget (same ratios as the spec defaults: μ/λ = 1.6, T_o > S): c = 4, S = 50 ms
(μ = 80 rps), λ = 50 rps, trigger +200 ms (μ → 16 rps) for 3 s; both runs at once.
"""

from __future__ import annotations

import asyncio

from compute.sregym.metastable import TriggerConfig, trigger_run


async def _pair() -> tuple[dict, dict]:
    base = {
        "rate": 50.0,
        "c": 4,
        "service_ms": 50.0,
        "timeout_ms": 400.0,
        "queue_limit": 64,
        "warmup_s": 2.0,
        "trigger_s": 3.0,
        "after_s": 7.0,
    }
    return tuple(
        await asyncio.gather(
            trigger_run(TriggerConfig(retries=3, **base)), trigger_run(TriggerConfig(retries=0, seed=1, **base))
        )
    )


def test_retry_storm_persists_with_retries_and_recovers_without() -> None:
    r3, r0 = asyncio.run(_pair())
    assert r3["predicted"] == "metastable" and r0["predicted"] == "stable"
    assert r3["goodput_before"] > 0.9 and r0["goodput_before"] > 0.9  # healthy before the trigger
    assert r3["low_seconds_after_removal"] >= 6, r3["goodput"]  # goodput < 50% for the whole window after removal
    assert r3["stuck"] and min(r3["amplification_end"]) > 3.5  # ≈ 1 + R attempts per request
    assert r0["recovery_s"] is not None and r0["recovery_s"] <= 5, r0["goodput"]
    assert not r0["stuck"]

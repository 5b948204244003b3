"""The problem suite: Problem = app (config overrides) + fault + oracles (spec §2; SREGym problems/base.py).

20 problems over 8 categories (process, misconfig, network, resource, datastore, metastable,
concurrent, no-fault control). The two retry-storm problems follow SREGym's
``capacity_decrease_rpc_retry_storm``: the latent condition (aggressive retries, small capacity)
is part of the baseline config and the trigger is a transient latency spike on the dependency.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compute.sregym.faults import Composite, Fault, FaultSpec, make_fault


@dataclass
class Problem:
    pid: str
    category: str
    specs: list[FaultSpec]
    text: str
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    pulse_target: str = "payment"
    correlated: bool = False

    @property
    def has_fault(self) -> bool:
        return bool(self.specs)

    def fault(self) -> Fault | None:
        if not self.specs:
            return None
        faults = [make_fault(s) for s in self.specs]
        return faults[0] if len(faults) == 1 else Composite(faults, "correlated" if self.correlated else "concurrent")

    def root_cause(self) -> str:
        return " ; ".join(s.root_cause(self.text) for s in self.specs) or "[fault_spec] none || no fault"


def _p(pid: str, category: str, component: str, kind: str, text: str, scope: str = "service", **params: Any) -> Problem:
    return Problem(pid, category, [FaultSpec(component, kind, scope, params)], text)


# retry storm: cart → checkout with R = 3, no back-off; checkout c = 2, S ≈ 80 + 20 ms (μ ≈ 19 rps) against
# λ ≈ 6 rps of checkouts: λ < μ < λ(1 + R) = 24, metastable. Catalog: μ ≈ 40 rps, λ ≈ 15, λ(1 + R) = 60.
STORM_APP = {
    "cart": {"retries": 3, "backoff_ms": 0, "timeout_ms": 400},
    "checkout": {"c": 2, "service_ms": 80, "timeout_ms": 2000, "queue_limit": 48},
    "gateway": {"retries": 0},
}
STORM_APP_CATALOG = {
    "gateway": {"retries": 3, "backoff_ms": 0, "timeout_ms": 300},
    "catalog": {"c": 2, "service_ms": 40, "queue_limit": 48, "pool_size": 8},
}

SUITE: list[Problem] = [
    _p("kill_payment", "process", "payment", "process_kill", "payment process killed (SIGKILL)", "process"),
    _p("stop_cart", "process", "cart", "process_stop", "cart process frozen (SIGSTOP): alive but unresponsive", "process"),
    _p("crashloop_checkout", "process", "checkout", "crash_loop", "checkout rollout misses a required env var: CrashLoopBackOff"),
    _p("wrong_port_cart", "misconfig", "cart", "wrong_port", "cart's new config points checkout at a closed port", dependency="checkout"),
    _p("bad_password_catalog", "misconfig", "catalog", "bad_db_password", "catalog rollout carries a stale DB password"),
    _p("bad_deploy_payment", "misconfig", "payment", "bad_deploy", "payment build raises in the handler for 60% of requests"),
    _p("latency_payment", "network", "payment", "net_latency", "payment sidecar adds 400 ± 50 ms", "link", latency_ms=400, jitter_ms=50),
    _p("loss_catalog", "network", "catalog", "net_loss", "catalog sidecar drops 40% of connections", "link", loss=0.4),
    _p("cpu_hog_recommender", "resource", "recommender", "cpu_hog", "recommender burns 60 ms CPU per request", cpu_hog_ms=60),
    _p("mem_leak_recommender", "resource", "recommender", "mem_leak", "recommender rollout leaks memory until OOMKilled"),
    _p("pool_exhaustion_catalog", "resource", "catalog", "pool_exhaustion", "catalog leaks DB connections: pool exhausted"),
    _p("disk_full_checkout", "resource", "checkout", "disk_full", "checkout's volume is full (write cap reached)"),
    _p("row_lock_datastore", "datastore", "datastore", "row_lock", "a stray transaction holds an exclusive lock", "datastore"),
    _p("kv_eviction_cart", "datastore", "cart", "kv_eviction", "cart cache maxmemory shrunk: eviction cascade"),
    Problem(
        "retry_storm_checkout", "metastable",
        [FaultSpec("checkout", "retry_storm", "service", {"trigger_target": "payment", "trigger_ms": 500, "trigger_s": 8, "callers": ["cart"]})],
        "payment latency spike tips cart→checkout retries (R = 3, no back-off) into a self-sustaining storm",
        overrides=STORM_APP, pulse_target="payment",
    ),
    Problem(
        "retry_storm_catalog", "metastable",
        [FaultSpec("catalog", "retry_storm", "service", {"trigger": "capacity", "trigger_ms": 150, "trigger_s": 8, "callers": ["gateway"]})],
        "a slow data-store scan tips gateway→catalog retries (R = 3, no back-off) into a self-sustaining storm",
        overrides=STORM_APP_CATALOG, pulse_target="catalog",
    ),
    Problem(
        "concurrent_password_latency", "concurrent",
        [FaultSpec("catalog", "bad_db_password"), FaultSpec("payment", "net_latency", "link", {"latency_ms": 400, "jitter_ms": 50})],
        "two independent incidents: a stale DB password on catalog and a slow payment link",
    ),
    Problem(
        "concurrent_crashloop_loss", "concurrent",
        [FaultSpec("checkout", "crash_loop"), FaultSpec("recommender", "net_loss", "link", {"loss": 0.4})],
        "two independent incidents: checkout crash-looping and recommender dropping connections",
    ),
    Problem(
        "correlated_lock_pool", "concurrent",
        [FaultSpec("datastore", "row_lock", "datastore"), FaultSpec("catalog", "pool_exhaustion")],
        "correlated: a data-store lock makes catalog hold and leak its pool connections", correlated=True,
    ),
    Problem("no_fault", "no-fault", [], "no fault injected (control)"),
]  # fmt: skip
BY_ID = {p.pid: p for p in SUITE}
CATEGORIES = ["process", "misconfig", "network", "resource", "datastore", "metastable", "concurrent", "no-fault"]

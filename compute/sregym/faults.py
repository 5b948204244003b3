"""Fault injectors (spec §2 "Faults"): every fault has a FaultSpec and async inject/recover.

``recover`` returns the system to its baseline: config faults roll the service back to its v1
config, sidecar faults clear the toxics, admin faults are cleared by restarting the replicas,
data-store and disk faults release what the injector holds. Everything stays inside the run
directory and the run's own processes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
from dataclasses import dataclass, field
from typing import Any

CATEGORY = {
    "process_kill": "process", "process_stop": "process", "crash_loop": "process",
    "wrong_port": "misconfig", "bad_db_password": "misconfig", "bad_deploy": "misconfig",
    "net_latency": "network", "net_loss": "network",
    "cpu_hog": "resource", "mem_leak": "resource", "pool_exhaustion": "resource", "disk_full": "resource",
    "row_lock": "datastore", "kv_eviction": "datastore",
    "retry_storm": "metastable",
}  # fmt: skip


@dataclass
class FaultSpec:
    """{component, kind, scope, params}: the structured root cause the diagnosis oracle matches."""

    component: str
    kind: str
    scope: str = "service"  # service | link | datastore | process
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def category(self) -> str:
        return CATEGORY[self.kind]

    def root_cause(self, text: str = "") -> str:
        return f"[fault_spec] component={self.component}; kind={self.kind}; scope={self.scope} || {text}".strip()


class Fault:
    """Base: a FaultSpec plus inject/recover against an Env (supervisor, observer, run dir)."""

    description = ""

    def __init__(self, spec: FaultSpec) -> None:
        self.spec = spec
        self.state: dict[str, Any] = {}

    @property
    def specs(self) -> list[FaultSpec]:
        return [self.spec]

    async def inject(self, env: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def recover(self, env: Any) -> None:
        await env.sup.restore(self.spec.component)


class ProcessKill(Fault):
    description = "SIGKILL the service's process (the supervisor restarts it after the back-off)"

    async def inject(self, env: Any) -> None:
        for pid in env.sup.live_pids(self.spec.component):
            os.kill(pid, signal.SIGKILL)


class ProcessStop(Fault):
    description = "SIGSTOP the service's process: alive but unresponsive, so readiness fails"

    async def inject(self, env: Any) -> None:
        self.state["pids"] = env.sup.live_pids(self.spec.component)
        for pid in self.state["pids"]:
            os.kill(pid, signal.SIGSTOP)

    async def recover(self, env: Any) -> None:
        for pid in self.state.get("pids", []):
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        await env.sup.restore(self.spec.component)


class ConfigFault(Fault):
    """A bad rollout: deploy a config patch (crash loop, wrong port, bad DB password, bad build, leaky build)."""

    PATCHES: dict[str, Any] = {
        "crash_loop": {"crash_on_start": "KeyError: required environment variable PAYMENT_GATEWAY_URL is not set"},
        "bad_db_password": {"db_password": "s3cret-shop-2025"},
        "bad_deploy": {"error_rate": 0.6},
        "mem_leak": {"leak_mb_per_s": 60},
    }

    async def inject(self, env: Any) -> None:
        st = env.sup.services[self.spec.component]
        if self.spec.kind == "wrong_port":
            dep = self.spec.params["dependency"]
            patch = {"downstream": {**st.config["downstream"], dep: env.closed_port}}
        else:
            patch = dict(self.PATCHES[self.spec.kind])
        await env.sup.deploy(self.spec.component, patch, note=f"rollout ({self.spec.kind})")


class SidecarToxic(Fault):
    """Network fault on the service's sidecar: latency ± jitter, or connection loss."""

    async def inject(self, env: Any) -> None:
        if self.spec.kind == "net_latency":
            tox = {
                "latency_ms": self.spec.params.get("latency_ms", 400),
                "jitter_ms": self.spec.params.get("jitter_ms", 50),
            }
        else:
            tox = {"loss": self.spec.params.get("loss", 0.3)}
        await env.sup.set_toxics(self.spec.component, tox)

    async def recover(self, env: Any) -> None:
        await env.sup.set_toxics(self.spec.component, {})


class AdminFault(Fault):
    """In-process resource faults through the replica admin API: CPU hog, pool leak, KV eviction."""

    async def inject(self, env: Any) -> None:
        body = {
            "cpu_hog": {"cpu_hog_ms": self.spec.params.get("cpu_hog_ms", 40)},
            "pool_exhaustion": {"pool_leak": 64},
            "kv_eviction": {"kv_maxmemory": 2},
        }[self.spec.kind]
        await env.sup.admin(self.spec.component, "/admin/fault", body)

    async def recover(self, env: Any) -> None:
        await env.sup.restart(self.spec.component)  # clears the in-process fault (and the leaked connections)
        await env.sup.restore(self.spec.component)


class DiskFull(Fault):
    description = "a ballast file fills the service's sandbox up to its write cap (never the real disk)"

    async def inject(self, env: Any) -> None:
        cfg = env.sup.services[self.spec.component].config
        path = os.path.join(cfg["sandbox"], "ballast.bin")
        with open(path, "wb") as f:
            f.write(b"\0" * int(float(cfg.get("disk_cap_kb", 512)) * 1024))
        self.state["path"] = path

    async def recover(self, env: Any) -> None:
        if self.state.get("path") and os.path.exists(self.state["path"]):
            os.unlink(self.state["path"])


class RowLock(Fault):
    description = "a stray transaction holds an exclusive lock on the data store"

    async def inject(self, env: Any) -> None:
        con = sqlite3.connect(env.sup.run_dir / "shop.db", timeout=2.0, check_same_thread=False, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")
        self.state["con"] = con

    async def recover(self, env: Any) -> None:
        con = self.state.pop("con", None)
        if con is not None:
            con.execute("ROLLBACK")
            con.close()


class RetryStorm(Fault):
    """The trigger of a retry-storm metastable failure: a transient latency spike on the dependency.

    The latent condition is the app's retry policy (the problem's baseline config); the trigger
    (sidecar latency on ``params['trigger_target']`` for ``trigger_s`` seconds) is removed on its own.
    """

    async def inject(self, env: Any) -> None:
        p = self.spec.params
        if p.get("trigger", "latency") == "capacity":  # capacity decrease: service time + trigger_ms
            await env.sup.admin(self.spec.component, "/admin/fault", {"extra_ms": p.get("trigger_ms", 200)})
        else:
            await env.sup.set_toxics(p["trigger_target"], {"latency_ms": p.get("trigger_ms", 400)})

        async def remove() -> None:
            await asyncio.sleep(p.get("trigger_s", 8))
            if p.get("trigger", "latency") == "capacity":
                await env.sup.admin(self.spec.component, "/admin/fault", {"extra_ms": None})
            else:
                await env.sup.set_toxics(p["trigger_target"], {})
            env.sup.event("trigger_removed", self.spec.component)

        self.state["task"] = asyncio.create_task(remove())

    async def recover(self, env: Any) -> None:
        task = self.state.get("task")
        if task and not task.done():
            task.cancel()
        if self.spec.params.get("trigger_target"):
            await env.sup.set_toxics(self.spec.params["trigger_target"], {})
        for name in (self.spec.component, *self.spec.params.get("callers", [])):
            await env.sup.restore(name, force=True)  # restarting drains the abandoned work


class Composite(Fault):
    """Concurrent (independent) or correlated (shared cause) pair of faults."""

    def __init__(self, faults: list[Fault], kind: str = "concurrent") -> None:
        super().__init__(faults[0].spec)
        self.faults, self.kind = faults, kind

    @property
    def specs(self) -> list[FaultSpec]:
        return [f.spec for f in self.faults]

    async def inject(self, env: Any) -> None:
        for f in self.faults:
            await f.inject(env)

    async def recover(self, env: Any) -> None:
        for f in reversed(self.faults):
            await f.recover(env)


def make_fault(spec: FaultSpec) -> Fault:
    cls = {
        "process_kill": ProcessKill, "process_stop": ProcessStop,
        "crash_loop": ConfigFault, "wrong_port": ConfigFault, "bad_db_password": ConfigFault,
        "bad_deploy": ConfigFault, "mem_leak": ConfigFault,
        "net_latency": SidecarToxic, "net_loss": SidecarToxic,
        "cpu_hog": AdminFault, "pool_exhaustion": AdminFault, "kv_eviction": AdminFault,
        "disk_full": DiskFull, "row_lock": RowLock, "retry_storm": RetryStorm,
    }[spec.kind]  # fmt: skip
    return cls(spec)

"""Mini control plane: a desired-state supervisor standing in for Kubernetes (spec §2, control.py).

Every service has a desired replica count and a config version. A reconcile loop (period 0.5 s)
restarts exited replicas with crash-loop back-off 1, 2, 4, … 30 s, probes readiness (``/healthz``)
and points the service's sidecar proxy at the ready replicas (round-robin). ``deploy``/``rollback``
keep a versioned config history per service; ``restart`` recreates a service's replicas and its
sidecar (so sidecar toxics vanish, as netem rules vanish with a recreated pod). Every child is
started by this process and killed by PID in ``stop`` — never by name.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compute.sregym.app.httpio import HttpError, request

RECONCILE_S = 0.5
SPAWN_TIMEOUT_S = 15.0


def backoff_delay(n_crashes: int) -> float:
    """Crash-loop back-off after the n-th consecutive crash: 1, 2, 4, 8, 16, 30, 30, … s (kubelet-like)."""
    return float(min(30.0, 2.0 ** max(0, n_crashes - 1)))


@dataclass
class Replica:
    proc: asyncio.subprocess.Process
    port: int
    version: int
    started: float
    ready: bool = False
    fails: int = 0


@dataclass
class ServiceState:
    name: str
    history: list[dict[str, Any]]  # config versions, history[-1] is not necessarily current
    current: int  # index into history
    replicas_desired: int = 1
    replicas: list[Replica] = field(default_factory=list)
    crashes: int = 0
    next_start: float = 0.0
    restarts: int = 0
    proxy_port: int = 0
    backends: tuple[int, ...] = ()

    @property
    def config(self) -> dict[str, Any]:
        return self.history[self.current]


class Supervisor:
    """Owns the mesh proxy and every service replica of one run."""

    def __init__(self, run_dir: Path, mem_limit_mb: float = 160.0) -> None:
        self.run_dir = Path(run_dir)
        self.token = secrets.token_hex(16)
        self.services: dict[str, ServiceState] = {}
        self.events: list[dict[str, Any]] = []
        self.pids: set[int] = set()
        self.mem_limit = mem_limit_mb * 2**20
        self.mesh: asyncio.subprocess.Process | None = None
        self.admin_port = 0
        self._task: asyncio.Task | None = None
        self._stopping = False
        self._t0 = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._t0

    def event(self, kind: str, service: str, detail: str = "") -> None:
        self.events.append({"t": round(self.now(), 2), "kind": kind, "service": service, "detail": detail})

    # -- mesh -----------------------------------------------------------------------------------
    async def _mesh_admin(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(3):  # bounded retries: a starved mesh process can be slow to answer
            try:
                status, out = await request(
                    self.admin_port, "POST", path, body, {"x-admin-token": self.token}, timeout=5.0
                )
                break
            except HttpError:
                if attempt == 2:
                    raise
        if status != 200:
            raise RuntimeError(f"mesh admin {path}: {status} {out!r}")
        return json.loads(out)

    async def set_toxics(self, name: str, toxics: dict[str, float]) -> None:
        await self._mesh_admin("/admin/toxics", {"name": name, "toxics": toxics})

    # -- lifecycle ------------------------------------------------------------------------------
    async def start(self, configs: dict[str, dict[str, Any]], replicas: dict[str, int] | None = None) -> None:
        """Start the mesh, one sidecar per service, then every service; wait until all are ready."""
        (self.run_dir / "config").mkdir(parents=True, exist_ok=True)
        self.mesh = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "compute.sregym.proxy", "--token", self.token,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        self.pids.add(self.mesh.pid)
        line = await asyncio.wait_for(self.mesh.stdout.readline(), SPAWN_TIMEOUT_S)
        self.admin_port = int(line.split()[1])
        for name in configs:
            port = (await self._mesh_admin("/admin/add", {"name": name}))["port"]
            self.services[name] = ServiceState(name, [], 0, proxy_port=port)
        for name, cfg in configs.items():
            cfg = dict(cfg)
            cfg["downstream"] = {d: self.services[d].proxy_port for d in cfg.get("downstream", [])}
            cfg.update(admin_token=self.token, version=1)
            st = self.services[name]
            st.history.append(cfg)
            st.replicas_desired = (replicas or {}).get(name, 1)
            self._write_config(st)
        await asyncio.gather(*(self._ensure(st) for st in self.services.values()))
        await self.wait_ready(timeout=SPAWN_TIMEOUT_S)
        self._task = asyncio.create_task(self._loop())

    def _write_config(self, st: ServiceState) -> Path:
        path = self.run_dir / "config" / f"{st.name}.v{st.config['version']}.json"
        path.write_text(json.dumps(st.config, indent=1))
        return path

    async def _spawn(self, st: ServiceState) -> Replica | None:
        path = self._write_config(st)
        err = open(self.run_dir / f"{st.name}.stderr", "ab")  # noqa: SIM115 - handed to the child
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "compute.sregym.app.service", "--config", str(path),
            stdout=asyncio.subprocess.PIPE, stderr=err,
        )  # fmt: skip
        err.close()
        self.pids.add(proc.pid)
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), SPAWN_TIMEOUT_S)
        except TimeoutError:
            line = b""
        except asyncio.CancelledError:
            await self._kill(proc)
            raise
        if not line.startswith(b"PORT"):
            await self._kill(proc)
            return None
        return Replica(proc, int(line.split()[1]), st.config["version"], self.now())

    async def _ensure(self, st: ServiceState) -> None:
        """Bring the replica count to the desired count (one reconcile step, bounded)."""
        for r in list(st.replicas):
            if r.proc.returncode is not None:
                st.replicas.remove(r)
                st.crashes += 1
                st.next_start = self.now() + backoff_delay(st.crashes)
                self.event("crash", st.name, f"exit {r.proc.returncode}; back-off {backoff_delay(st.crashes):.0f} s")
        while len(st.replicas) > st.replicas_desired:
            await self._kill(st.replicas.pop().proc)
        for _ in range(st.replicas_desired - len(st.replicas)):
            if self.now() < st.next_start:
                break
            rep = await self._spawn(st)
            st.restarts += 1
            if rep is None:
                st.crashes += 1
                st.next_start = self.now() + backoff_delay(st.crashes)
                self.event("crash", st.name, f"CrashLoopBackOff: back-off {backoff_delay(st.crashes):.0f} s")
                break
            st.replicas.append(rep)

    async def _probe(self, st: ServiceState) -> None:
        for r in st.replicas:
            try:
                status, _ = await request(r.port, "GET", "/healthz", timeout=0.5)
                ok = status == 200
            except HttpError:
                ok = False
            r.fails = 0 if ok else r.fails + 1
            r.ready = ok or (r.ready and r.fails < 2)
            if r.ready and r.proc.returncode is None and self.now() - r.started > 10:
                st.crashes = 0  # healthy for a while: the back-off resets
            if self.mem_limit and _rss(r.proc.pid) > self.mem_limit:
                self.event("oomkill", st.name, f"OOMKilled: rss above {self.mem_limit / 2**20:.0f} MiB")
                await self._kill(r.proc)
        backends = tuple(r.port for r in st.replicas if r.ready and r.proc.returncode is None)
        if backends != st.backends:
            st.backends = backends
            await self._mesh_admin("/admin/backends", {"name": st.name, "ports": list(backends)})

    async def _loop(self) -> None:
        while not self._stopping:  # a flag as well as cancel: 3.11's wait_for can swallow a cancellation
            await asyncio.sleep(RECONCILE_S)
            for st in self.services.values():
                try:
                    await self._ensure(st)
                    await self._probe(st)
                except (HttpError, RuntimeError, OSError) as exc:
                    self.event("reconcile_error", st.name, str(exc))

    async def wait_ready(self, timeout: float = 10.0, names: list[str] | None = None) -> bool:
        """Wait (bounded) until every named service has its desired number of ready replicas."""
        end = self.now() + timeout
        while self.now() < end:
            for st in self.services.values():
                if self._task is None:
                    await self._probe(st)
            sts = [self.services[n] for n in (names or list(self.services))]
            if all(sum(r.ready for r in s.replicas) >= s.replicas_desired for s in sts):
                return True
            await asyncio.sleep(0.2)
        return False

    # -- actions (what an operator / agent may do) ----------------------------------------------
    async def restart(self, name: str) -> None:
        st = self.services[name]
        for r in st.replicas:
            await self._kill(r.proc)
        st.replicas.clear()
        st.crashes, st.next_start = 0, 0.0
        await self.set_toxics(name, {})
        self.event("restart", name)
        await self._ensure(st)
        await self._probe(st)

    async def deploy(self, name: str, patch: dict[str, Any], note: str = "") -> int:
        st = self.services[name]
        cfg = {**st.config, **patch, "version": max(c["version"] for c in st.history) + 1}
        st.history.append(cfg)
        st.current = len(st.history) - 1
        self.event("deploy", name, f"v{cfg['version']} {note}".strip())
        await self.restart(name)
        return cfg["version"]

    async def rollback(self, name: str) -> int:
        st = self.services[name]
        if st.current == 0:
            return st.config["version"]
        st.current -= 1
        self.event("rollback", name, f"to v{st.config['version']}")
        await self.restart(name)
        return st.config["version"]

    async def restore(self, name: str, force: bool = False) -> None:
        """Reconcile one service to its baseline: v1 config, one replica, no toxics (restart only if needed)."""
        st = self.services[name]
        changed = st.current != 0 or st.replicas_desired != 1
        st.current, st.replicas_desired = 0, 1
        if changed or force or not any(r.ready for r in st.replicas):
            await self.restart(name)
        else:
            await self.set_toxics(name, {})

    async def scale(self, name: str, n: int) -> None:
        st = self.services[name]
        st.replicas_desired = max(0, min(int(n), 4))  # bounded
        self.event("scale", name, str(st.replicas_desired))
        await self._ensure(st)
        await self._probe(st)

    async def admin(self, name: str, path: str, body: dict[str, Any]) -> None:
        """Call every replica's admin endpoint (fault knobs) with the run's token."""
        for r in self.services[name].replicas:
            try:
                await request(r.port, "POST", path, body, {"x-admin-token": self.token}, timeout=1.0)
            except HttpError:
                pass

    def live_pids(self, name: str) -> list[int]:
        return [r.proc.pid for r in self.services[name].replicas if r.proc.returncode is None]

    # -- teardown -------------------------------------------------------------------------------
    async def _kill(self, proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is None:
            try:
                proc.kill()  # SIGKILL by PID (works on SIGSTOPped processes too)
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(proc.wait(), 5.0)
            except TimeoutError:
                pass

    async def stop(self) -> None:
        self._stopping = True
        if self._task:
            await stop_task(self._task)
            self._task = None
        for st in self.services.values():
            for r in st.replicas:
                await self._kill(r.proc)
            st.replicas.clear()
        if self.mesh:
            await self._kill(self.mesh)
        for pid in self.pids:  # anything else this supervisor started and that is still its child
            if _is_child(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except (ProcessLookupError, ChildProcessError):
                    pass


async def stop_task(task: asyncio.Task, timeout: float = 5.0) -> None:
    """Cancel a task and wait for it, bounded (a loop that lost its cancellation is abandoned)."""
    task.cancel()
    await asyncio.wait({task}, timeout=timeout)


def _is_child(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError, IndexError):
        return False


def _rss(pid: int) -> float:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * 4096
    except (OSError, IndexError, ValueError):
        return 0.0

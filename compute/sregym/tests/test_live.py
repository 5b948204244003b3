"""Live known answers on the real loopback shop: every injector's fault is observable through the
application and fully reverted by ``recover``; tools cannot reach injector/admin endpoints; every
socket binds 127.0.0.1; no process outlives the supervisor."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import psutil

from compute.sregym.app.httpio import HttpError, request
from compute.sregym.app.topology import make_configs
from compute.sregym.conductor import _closed_port
from compute.sregym.control import Supervisor
from compute.sregym.faults import FaultSpec, make_fault
from compute.sregym.obs import Observer, parse_metrics
from compute.sregym.tools import AgentTools


async def hit(sup: Supervisor, path: str, n: int = 4, timeout: float = 3.0) -> list[tuple[int, str, float]]:
    """n sequential requests to the gateway: (status, body, seconds)."""
    out = []
    for _ in range(n):
        t = time.monotonic()
        try:
            status, body = await request(sup.services["gateway"].proxy_port, "GET", path, timeout=timeout)
            out.append((status, body.decode(errors="replace"), time.monotonic() - t))
        except HttpError as exc:
            out.append((599, str(exc), time.monotonic() - t))
    return out


async def all_ok(sup: Supervisor, path: str, tries: int = 40) -> bool:
    """Bounded wait until n consecutive requests succeed (after a recovery)."""
    for _ in range(tries):
        if all(s == 200 for s, _, _ in await hit(sup, path, 3)):
            return True
        await asyncio.sleep(0.25)
    return False


async def metric(sup: Supervisor, service: str, name: str) -> float:
    r = sup.services[service].replicas[0]
    _, out = await request(r.port, "GET", "/metrics", timeout=1.0)
    return parse_metrics(out.decode()).get(name, 0.0)


# (spec, route, predicate over the responses under the fault)
CASES = [
    (FaultSpec("cart", "wrong_port", params={"dependency": "checkout"}), "/checkout", lambda rs: all("ECONNREFUSED" in b for _, b, _ in rs)),
    (FaultSpec("catalog", "bad_db_password"), "/browse", lambda rs: all("password authentication failed" in b for _, b, _ in rs)),
    (FaultSpec("payment", "net_latency", "link", {"latency_ms": 300, "jitter_ms": 0}), "/checkout", lambda rs: min(t for *_, t in rs) > 0.28),
    (FaultSpec("catalog", "net_loss", "link", {"loss": 1.0}), "/browse", lambda rs: all("connection reset" in b for _, b, _ in rs)),
    (FaultSpec("recommender", "cpu_hog", params={"cpu_hog_ms": 60}), "/browse", lambda rs: min(t for *_, t in rs) > 0.06),
    (FaultSpec("catalog", "pool_exhaustion"), "/browse", lambda rs: all("pool exhausted" in b for _, b, _ in rs)),
    (FaultSpec("checkout", "disk_full"), "/checkout", lambda rs: all("No space left on device" in b for _, b, _ in rs)),
    (FaultSpec("datastore", "row_lock", "datastore"), "/browse", lambda rs: all("database is locked" in b for _, b, _ in rs)),
    (FaultSpec("cart", "process_stop", "process"), "/cart", lambda rs: all("no healthy upstream" in b for _, b, _ in rs)),
    (FaultSpec("catalog", "retry_storm", params={"trigger": "capacity", "trigger_ms": 200, "trigger_s": 60}), "/browse",
     lambda rs: min(t for *_, t in rs) > 0.2),
]  # fmt: skip


async def _round_trips(run_dir: Path) -> dict:
    sup = Supervisor(run_dir)
    report: dict = {}
    await sup.start(make_configs(run_dir, seed=1))
    env = SimpleNamespace(sup=sup, closed_port=_closed_port())
    try:
        for route in ("/browse", "/cart", "/checkout"):
            assert await all_ok(sup, route), f"baseline {route} unhealthy"
        for spec, route, observable in CASES:
            fault = make_fault(spec)
            await fault.inject(env)
            if spec.kind == "process_stop":
                await asyncio.sleep(1.6)  # two failed readiness probes take the replica out of rotation
            rs = await hit(sup, route, 3)
            report[spec.kind] = {"observable": bool(observable(rs)), "sample": rs[0][1][:160]}
            await fault.recover(env)
            report[spec.kind]["reverted"] = await all_ok(sup, route)
            report[spec.kind]["baseline_config"] = all(st.current == 0 for st in sup.services.values())
        # bad build: ~60% of payment's handlers raise (the gateway's retry hides some from the client)
        fault = make_fault(FaultSpec("payment", "bad_deploy"))
        await fault.inject(env)
        await hit(sup, "/checkout", 6)
        raised = await metric(sup, "payment", "svc_errors_total") >= 1
        await fault.recover(env)
        report["bad_deploy"] = {
            "observable": raised,
            "reverted": await all_ok(sup, "/checkout"),
            "baseline_config": True,
        }
        # KV eviction: the cache is capped, then restored
        fault = make_fault(FaultSpec("cart", "kv_eviction"))
        await fault.inject(env)
        await hit(sup, "/cart", 6)
        capped = await metric(sup, "cart", "svc_kv_keys") <= 2
        await fault.recover(env)
        await hit(sup, "/cart", 8)
        report["kv_eviction"] = {
            "observable": capped,
            "reverted": await metric(sup, "cart", "svc_kv_keys") > 2,
            "baseline_config": True,
        }
        # crash loop: back-off 1 s then 2 s; process kill: a new PID; memory leak: OOMKilled
        fault = make_fault(FaultSpec("checkout", "crash_loop"))
        await fault.inject(env)
        await asyncio.sleep(3.8)
        backoffs = [e["detail"] for e in sup.events if e["kind"] == "crash" and e["service"] == "checkout"]
        await fault.recover(env)
        report["crash_loop"] = {"observable": backoffs[:2] == ["CrashLoopBackOff: back-off 1 s", "CrashLoopBackOff: back-off 2 s"],
                                "reverted": await all_ok(sup, "/checkout"), "baseline_config": True, "sample": backoffs}  # fmt: skip
        old = sup.live_pids("payment")
        fault = make_fault(FaultSpec("payment", "process_kill", "process"))
        await fault.inject(env)
        healed = await all_ok(sup, "/checkout")
        report["process_kill"] = {
            "observable": sup.live_pids("payment") != old,
            "reverted": healed,
            "baseline_config": True,
        }
        fault = make_fault(FaultSpec("recommender", "mem_leak"))
        await fault.inject(env)
        for _ in range(40):
            if any(e["kind"] == "oomkill" for e in sup.events):
                break
            await asyncio.sleep(0.25)
        oom = any(e["kind"] == "oomkill" and e["service"] == "recommender" for e in sup.events)
        await fault.recover(env)
        report["mem_leak"] = {"observable": oom, "reverted": await all_ok(sup, "/browse"), "baseline_config": True}
        report["pids"] = sorted(sup.pids)
    finally:
        await sup.stop()
    return report


def test_every_fault_is_observable_and_reverted() -> None:
    with tempfile.TemporaryDirectory() as d:
        report = asyncio.run(_round_trips(Path(d)))
    pids = report.pop("pids")
    assert len(report) == len(CASES) + 5  # every injector kind (retry_storm by its capacity trigger)
    for kind, r in report.items():
        assert r["observable"], f"{kind}: fault not observable: {r}"
        assert r["reverted"] and r["baseline_config"], f"{kind}: not reverted: {r}"
    alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert alive == []


async def _tools_and_sockets(run_dir: Path) -> dict:
    sup = Supervisor(run_dir)
    await sup.start(make_configs(run_dir, seed=2))
    obs = Observer(sup, run_dir / "obs.db")
    env = SimpleNamespace(sup=sup, obs=obs, baseline_window=(0.0, 1.0))
    tools = AgentTools(env, max_steps=30)
    out: dict = {}
    try:
        rep = sup.services["catalog"].replicas[0]
        side = sup.services["catalog"].proxy_port
        out["refused"] = [
            await tools.shell(f"curl http://127.0.0.1:{rep.port}/admin/fault"),  # replica admin
            await tools.shell(f"curl http://127.0.0.1:{side}/admin/fault"),  # admin path through a sidecar
            await tools.shell(f"curl http://127.0.0.1:{sup.admin_port}/admin/toxics"),  # the mesh (injector) admin
            await tools.shell(f"curl -X POST http://127.0.0.1:{side}/item"),
            await tools.shell("cat ../config/catalog.v1.json"),  # config files hold the admin token
            await tools.shell("rm -rf logs"),
            await tools.shell("ls; cat /etc/passwd"),
        ]
        out["allowed"] = await tools.shell(f"curl http://127.0.0.1:{side}/healthz")
        cfg = await tools.get_config("catalog")
        out["config_text"] = json.dumps(cfg)
        out["patch_refused"] = await tools.patch_config("catalog", {"admin_token": "x"})
        status, _ = await request(rep.port, "POST", "/admin/fault", {"extra_ms": 100}, timeout=1.0)
        out["admin_without_token"] = status
        listen = []
        for pid in sup.pids:
            if psutil.pid_exists(pid):
                listen += [
                    c.laddr.ip
                    for c in psutil.Process(pid).net_connections(kind="inet")
                    if c.status == psutil.CONN_LISTEN
                ]
        out["listen_ips"] = set(listen)
        out["n_listen"] = len(listen)
        out["token"] = sup.token
        out["pids"] = sorted(sup.pids)
    finally:
        await sup.stop()
        obs.db.close()
    return out


def test_tools_are_fenced_and_everything_binds_loopback() -> None:
    with tempfile.TemporaryDirectory() as d:
        out = asyncio.run(_tools_and_sockets(Path(d)))
    assert all(r.startswith("refused") for r in out["refused"]), out["refused"]
    assert out["allowed"].startswith("HTTP 200")
    assert out["token"] not in out["config_text"] and "s3cret-shop-2026" not in out["config_text"]
    assert out["patch_refused"].startswith("error: keys not patchable")
    assert out["admin_without_token"] == 403
    assert out["listen_ips"] == {"127.0.0.1"} and out["n_listen"] >= 7 + 6  # mesh admin + 6 sidecars + 6 services
    alive = [p for p in out["pids"] if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert alive == [] and os.getpid() not in out["pids"]

"""Conductor: deploy → baseline → noise → inject → detection/diagnosis/mitigation → oracles → recover (SREGym lifecycle).

Times are measured on the supervisor clock from the injection: TTD (detection submitted), TTL
(diagnosis, i.e. localisation, submitted) and TTM (mitigation submitted, counted only when the
mitigation oracle passes).
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compute.sregym.app.httpio import HttpError
from compute.sregym.app.topology import MIX, SERVICES, make_configs
from compute.sregym.control import Supervisor, stop_task
from compute.sregym.load import LoadGen
from compute.sregym.noise import Noise
from compute.sregym.obs import Observer
from compute.sregym.oracles import (
    MitigationOracle,
    alert_oracle,
    detection_oracle,
    diagnosis_oracle,
    judge_window,
    localization_oracle,
)
from compute.sregym.problems import Problem
from compute.sregym.tools import AgentTools

Emit = Callable[[str, dict[str, Any]], None]


@dataclass
class Timings:
    """Scaled timers (SREGym: 120 s alert window, 300 s noise cycles); the ratios are kept."""

    rate: float = 30.0  # client λ at the gateway (rps)
    baseline_s: float = 10.0
    settle_s: float = 6.0  # injection → agent start
    agent_s: float = 60.0  # cap on the agent's wall time
    probe_s: float = 5.0
    deadline_s: float = 60.0
    pulse_settle_s: float = 20.0
    alert_s: float = 0.0  # 0 = skip the alert oracle


@dataclass
class Env:
    sup: Supervisor
    obs: Observer
    gen: LoadGen
    run_dir: Path
    base_rate: float
    closed_port: int
    baseline_window: tuple[float, float] = (0.0, 0.0)
    stopping: bool = False
    tasks: list[asyncio.Task] = field(default_factory=list)


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


async def deploy(run_dir: Path, problem: Problem | None, seed: int, rate: float) -> Env:
    """Start the shop (mesh, six services, data store), the observer and the open-loop load."""
    sup = Supervisor(run_dir)
    await sup.start(make_configs(run_dir, seed, problem.overrides if problem else None))
    gen = LoadGen(sup.services["gateway"].proxy_port, rate, MIX, timeout_ms=2000, seed=seed)
    gen.t0 = sup._t0  # one clock for load, metrics and events
    obs = Observer(sup, run_dir / "obs.db", gen)
    env = Env(sup, obs, gen, Path(run_dir), rate, _closed_port())
    obs.start()
    env.tasks.append(asyncio.create_task(gen.run(3600)))
    return env


async def teardown(env: Env) -> None:
    env.gen.stop()
    env.stopping = True
    for t in env.tasks:
        await stop_task(t)
    await env.obs.stop()
    await env.sup.stop()
    env.obs.db.close()


async def stream(env: Env, emit: Emit) -> None:
    """Emit each scraped second (per-service rps/err/p95, client goodput) and new control-plane events."""
    seen_t, n_events = -1.0, 0
    while not env.stopping:
        await asyncio.sleep(1.0)
        vals = {}
        for name, row in list(env.obs.latest.items()):
            if name == "client":
                continue
            for k in ("rps", "err", "p95", "queue"):
                v = row.get(k)
                if v is not None and v == v:
                    vals[f"{k}/{name}"] = v
        c = env.gen.window(env.sup.now() - 4, env.sup.now() - 3)
        if c["submitted"]:
            vals["client/success"] = c["success"]
            vals["client/amplification"] = c["amplification"]
        t = round(env.sup.now(), 1)
        if vals and t > seen_t:
            emit("scalars", {"step": t, "values": vals})
            seen_t = t
        for ev in env.sup.events[n_events:]:
            emit("event", ev)
        n_events = len(env.sup.events)
        emit("health", {n: env.obs.latest.get(n, {}) for n in SERVICES})


async def healthy_now(env: Env, probe_s: float = 4.0) -> tuple[bool, str]:
    """One behavioural probe (the round-trip check after recovery)."""
    t0 = env.sup.now()
    await asyncio.sleep(probe_s + env.gen.timeout + 0.5)
    client = env.gen.window(t0, t0 + probe_s)
    services = {n: env.obs.window(n, t0, t0 + probe_s) for n in SERVICES}
    return judge_window(client, services, _relaxed())


def _relaxed() -> Any:
    from compute.sregym.oracles import Slo

    return Slo(min_submitted=10, min_rps=2.0)


async def run_incident(
    problem: Problem,
    agent: Any,
    noise: str = "off",
    seed: int = 0,
    max_steps: int = 20,
    timings: Timings | None = None,
    run_dir: Path | None = None,
    emit: Emit | None = None,
    mitigation: bool = True,
) -> dict[str, Any]:
    """One incident through the whole lifecycle; returns verdicts, TTD/TTL/TTM, transcript and events."""
    tm = timings or Timings()
    emit = emit or (lambda kind, payload: None)
    tmp = tempfile.TemporaryDirectory(prefix="sregym-") if run_dir is None else None
    run_dir = Path(tmp.name) if tmp else Path(run_dir)
    env = await deploy(run_dir, problem, seed, tm.rate)
    result: dict[str, Any] = {"problem": problem.pid, "category": problem.category, "agent": agent.name,
                              "noise": noise, "seed": seed, "root_cause": problem.root_cause()}  # fmt: skip
    noise_gen = Noise(env, noise, seed, avoid={s.component for s in problem.specs})
    fault = problem.fault()
    try:
        env.tasks.append(asyncio.create_task(stream(env, emit)))
        emit("log", {"msg": f"deployed; capturing a {tm.baseline_s:.0f} s baseline"})
        await asyncio.sleep(tm.baseline_s)
        env.baseline_window = (2.0, env.sup.now())
        oracle = MitigationOracle(env, problem.pulse_target, tm.probe_s, tm.deadline_s, tm.pulse_settle_s)
        oracle.capture_baseline()
        # was the system itself within the SLO before the fault? (if not, failures are the environment's)
        b0, b1 = env.baseline_window[0], env.baseline_window[1] - env.gen.timeout - 0.5
        base_ok, base_why = judge_window(
            env.gen.window(b0, b1), {n: env.obs.window(n, b0, b1) for n in SERVICES}, _relaxed()
        )
        oracle.baseline_ok = base_ok
        result["baseline_slo"] = {"success": base_ok, "reason": base_why}
        noise_gen.start()
        t_inject = env.sup.now()
        if fault is not None:
            await fault.inject(env)
            env.sup.event("inject", ",".join(s.component for s in problem.specs), problem.root_cause())
        emit("log", {"msg": f"injected: {problem.root_cause()}"})
        await asyncio.sleep(tm.settle_s)
        env.obs.ingest()
        tools = AgentTools(env, max_steps, emit)
        try:
            await asyncio.wait_for(agent.run(tools), tm.agent_s)
        except TimeoutError:
            emit("log", {"msg": f"agent stopped after {tm.agent_s:.0f} s"})
        subs = tools.submissions
        det = subs.get("detection", {})
        result["detection"] = detection_oracle(det.get("answer", "No"), problem.has_fault) if det else {
            "success": False, "reason": "no detection submitted", "failure_class": "agent", "detail": {}}  # fmt: skip
        result["ttd"] = det["t"] - t_inject if det and result["detection"]["success"] and problem.has_fault else None
        if problem.has_fault:
            dia = subs.get("diagnosis", {})
            result["localization"] = localization_oracle(dia.get("localization", []), problem.specs)
            result["diagnosis"] = diagnosis_oracle(dia, problem.specs)
            result["ttl"] = dia["t"] - t_inject if dia and result["localization"]["success"] else None
        await noise_gen.stop()
        if mitigation:
            result["mitigation"] = await oracle.evaluate()
            mit = subs.get("mitigation")
            result["ttm"] = (mit["t"] - t_inject) if mit and result["mitigation"]["success"] else None
            if tm.alert_s > 0:
                result["alert"] = await alert_oracle(env, tm.alert_s, tm.probe_s)
        result["transcript"] = tools.transcript
        result["noise_events"] = noise_gen.log
        result["agent_notes"] = getattr(agent, "notes", {})
        # recover and reconcile to the baseline
        try:
            if fault is not None:
                await fault.recover(env)
            for name in SERVICES:
                await env.sup.restore(name)
            await env.sup.wait_ready(10.0)
            ok, why = await healthy_now(env, tm.probe_s)
        except (HttpError, RuntimeError, OSError) as exc:
            ok, why = False, f"environment: recovery failed: {exc}"
        result["recovered"] = {"success": ok, "reason": why}
        result["events"] = list(env.sup.events)
    finally:
        await noise_gen.stop()
        await teardown(env)
        if tmp:
            tmp.cleanup()
    return result

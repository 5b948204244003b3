"""Oracles (spec §2 "Oracles"; SREGym conductor/oracles, AIOpsLab localisation rule).

Every ``evaluate`` returns {success, reason, failure_class ∈ {agent, environment}, detail}.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any

from compute.sregym.app.topology import SERVICES
from compute.sregym.faults import FaultSpec


def verdict(success: bool, reason: str, failure_class: str = "agent", **detail: Any) -> dict[str, Any]:
    return {
        "success": bool(success),
        "reason": reason,
        "failure_class": None if success else failure_class,
        "detail": detail,
    }


def detection_oracle(answer: str, fault_injected: bool) -> dict[str, Any]:
    """Expects "Yes" iff a fault was injected (the suite includes no-fault controls)."""
    said_yes = str(answer).strip().lower().startswith("y")
    ok = said_yes == fault_injected
    return verdict(ok, f"answered {'Yes' if said_yes else 'No'}, expected {'Yes' if fault_injected else 'No'}")


def localization_score(truth: set[str], answer: set[str]) -> float:
    """AIOpsLab rule: |truth|/|answer|·100 when the answer contains the truth (exact or superset), else 0."""
    truth, answer = set(truth), set(answer)
    if not answer or not truth <= answer:
        return 0.0
    return 100.0 * len(truth) / len(answer)


def localization_oracle(answer: list[str], specs: list[FaultSpec]) -> dict[str, Any]:
    truth = {s.component for s in specs}
    score = localization_score(truth, set(answer))
    return verdict(score > 0, f"truth {sorted(truth)}, answer {sorted(set(answer))}", score=score)


def diagnosis_oracle(answer: dict[str, Any], specs: list[FaultSpec]) -> dict[str, Any]:
    """Deterministic structured match on (component, category[, scope]) against any injected FaultSpec."""
    comp, cat, scope = answer.get("component"), answer.get("category"), answer.get("scope")
    for s in specs:
        if comp == s.component and cat == s.category and (scope in (None, s.scope)):
            return verdict(True, f"matches {s.root_cause()}")
    return verdict(False, f"{answer} matches none of {[s.root_cause() for s in specs]}")


@dataclass
class Slo:
    """Healthy = success ≥ 95%, p95 ≤ 1 s, queue ≤ 5, no pool waiters, amplification ≤ 1.5, goodput guard."""

    success: float = 0.95
    p95_s: float = 1.0
    queue: float = 5.0
    pool_waiters: float = 0.0
    amplification: float = 1.5
    min_submitted: int = 20
    min_rps: float = 5.0


def judge_window(client: dict[str, float], services: dict[str, dict[str, float]], slo: Slo) -> tuple[bool, str]:
    """One behavioural probe on recorded client and per-service windows (pure: testable on traces)."""
    if client["submitted"] < slo.min_submitted or client["rps"] < slo.min_rps:
        return False, f"goodput guard: {client['submitted']:.0f} requests, {client['rps']:.1f} rps"
    if client["success"] < slo.success:
        return False, f"success {client['success']:.1%} < {slo.success:.0%}"
    if not client["p95"] <= slo.p95_s:
        return False, f"client p95 {client['p95']:.2f} s > {slo.p95_s} s"
    for name, w in services.items():
        for key, lim in (
            ("queue", slo.queue),
            ("pool_waiters", slo.pool_waiters),
            ("amplification", slo.amplification),
        ):
            v = w.get(key, 0.0)
            if not math.isnan(v) and v > lim:
                return False, f"{name} {key} {v:.2f} > {lim}"
    return True, "healthy"


class MitigationOracle:
    """Behavioural mitigation check after SREGym's retry-storm oracle (scaled timers).

    2 consecutive healthy probes within ``deadline_s``; then a stability pulse (600 ms sidecar
    latency on ``pulse_target`` for 3 s) after which one more healthy probe must come within
    ``settle_s`` (no re-collapse); plus state checks (every service ready, no crash loop).
    """

    def __init__(self, env: Any, pulse_target: str = "payment", probe_s: float = 5.0, deadline_s: float = 60.0,
                 settle_s: float = 20.0, pulse_ms: float = 600.0, pulse_s: float = 3.0, slo: Slo | None = None) -> None:  # fmt: skip
        self.env, self.pulse_target = env, pulse_target
        self.probe_s, self.deadline_s, self.settle_s = probe_s, deadline_s, settle_s
        self.pulse_ms, self.pulse_s = pulse_ms, pulse_s
        self.slo = slo or Slo()
        self.baseline: dict[str, Any] = {}
        self.baseline_ok = True  # False when the system violated the SLO before any fault (a starved machine)
        self.probes: list[dict[str, Any]] = []

    def capture_baseline(self) -> dict[str, Any]:
        sup = self.env.sup
        self.baseline = {
            n: {"version": st.config["version"], "replicas": st.replicas_desired} for n, st in sup.services.items()
        }
        return self.baseline

    async def probe(self) -> tuple[bool, str]:
        env = self.env
        lag = env.gen.timeout * (env.gen.retries + 1) + 0.5
        t0 = env.sup.now()
        await asyncio.sleep(self.probe_s + lag)
        t1 = t0 + self.probe_s
        client = env.gen.window(t0, t1)
        services = {n: env.obs.window(n, t0, t1) for n in SERVICES}
        ok, why = judge_window(client, services, self.slo)
        self.probes.append(
            {"t": round(t1, 1), "ok": ok, "why": why, "success": client["success"], "rps": client["rps"]}
        )
        return ok, why

    async def evaluate(self) -> dict[str, Any]:
        v = await self._evaluate()
        if not v["success"] and not self.baseline_ok:
            v["failure_class"] = "environment"
            v["reason"] = "baseline already violated the SLO; " + v["reason"]
        return v

    async def _evaluate(self) -> dict[str, Any]:
        env = self.env
        if not env.gen.running:
            return verdict(False, "load generator not running", "environment")
        end = env.sup.now() + self.deadline_s
        streak, why = 0, ""
        while env.sup.now() < end and streak < 2:
            ok, why = await self.probe()
            streak = streak + 1 if ok else 0
        if streak < 2:
            return verdict(
                False, f"no 2 consecutive healthy probes within {self.deadline_s:.0f} s: {why}", probes=self.probes
            )
        env.sup.event("pulse", self.pulse_target, f"{self.pulse_ms:.0f} ms for {self.pulse_s:.0f} s")
        await env.sup.set_toxics(self.pulse_target, {"latency_ms": self.pulse_ms})
        await asyncio.sleep(self.pulse_s)
        await env.sup.set_toxics(self.pulse_target, {})
        end = env.sup.now() + self.settle_s
        ok = False
        while env.sup.now() < end and not ok:
            ok, why = await self.probe()
        if not ok:
            return verdict(False, f"re-collapsed after the stability pulse: {why}", probes=self.probes)
        for name, st in env.sup.services.items():
            if not any(r.ready for r in st.replicas) or st.crashes > 0:
                return verdict(False, f"state check: {name} not ready or crash-looping", probes=self.probes)
        return verdict(True, "healthy, stable after the pulse", probes=self.probes)


async def alert_oracle(
    env: Any, window_s: float = 30.0, probe_s: float = 5.0, slo: Slo | None = None
) -> dict[str, Any]:
    """No alert (client success < 95% or p95 > 1 s over any 5 s window) for ``window_s`` (120 s in SREGym)."""
    slo = slo or Slo()
    lag = env.gen.timeout * (env.gen.retries + 1) + 0.5
    t_start = env.sup.now()
    await asyncio.sleep(window_s + lag)
    alerts = []
    t = t_start
    while t + probe_s <= t_start + window_s + 1e-9:
        c = env.gen.window(t, t + probe_s)
        if c["submitted"] and (c["success"] < slo.success or not c["p95"] <= slo.p95_s):
            alerts.append({"t": round(t, 1), "success": c["success"], "p95": c["p95"]})
        t += probe_s
    return verdict(not alerts, f"{len(alerts)} alert(s) in {window_s:.0f} s", alerts=alerts)


JUDGE_PROMPT = (
    "You grade an SRE agent's diagnosis against the ground truth. Score each criterion in [0, 1]: "
    "localization (right component), characterization (right fault kind and mechanism), scope (right blast "
    "radius: service, link, data store or process), trace_coherence (the evidence cited supports the claim). "
    'Reply with one JSON object {"localization": x, "characterization": x, "scope": x, "trace_coherence": x}.'
)


def llm_judge(
    diagnosis: dict[str, Any], root_cause: str, base_url: str, model: str = "gpt-4o-mini", timeout_s: float = 60.0
) -> dict[str, Any]:
    """Optional: SREGym's LLM checklist judge over any OpenAI-compatible endpoint; pass iff the mean score ≥ 0.70."""
    import json
    import re
    import urllib.request

    messages = [{"role": "system", "content": JUDGE_PROMPT},
                {"role": "user", "content": f"Ground truth: {root_cause}\nAgent diagnosis: {json.dumps(diagnosis, default=str)}"}]  # fmt: skip
    body = json.dumps({"model": model, "messages": messages, "temperature": 0.0, "max_tokens": 200}).encode()
    req = urllib.request.Request(
        f"{base_url.rstrip('/')}/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:  # noqa: S310 - user-configured endpoint
            content = json.loads(resp.read())["choices"][0]["message"]["content"]
        m = re.search(r"\{.*\}", content, re.S)
        scores = {k: min(1.0, max(0.0, float(v))) for k, v in json.loads(m.group(0) if m else "{}").items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return verdict(False, f"judge unavailable: {exc}", "environment")
    keys = ("localization", "characterization", "scope", "trace_coherence")
    if not all(k in scores for k in keys):
        return verdict(False, f"judge reply lacks {sorted(set(keys) - set(scores))}", "environment", scores=scores)
    mean = sum(scores[k] for k in keys) / len(keys)
    return verdict(mean >= 0.70, f"checklist mean {mean:.2f} (pass ≥ 0.70)", scores=scores, mean=mean)

"""Agents: the scripted SRE baseline and an optional LLM ReAct agent (spec §2 "Agents").

Scripted baseline (one pass: detect → localise → diagnose → one fix → submit):
1. A service is anomalous when its error rate or p95 over the last ``window_s`` exceeds its
   baseline mean + 3σ (plus small absolute floors), or it has no ready replica. The answer is the
   set of deepest anomalous nodes, i.e. those whose dependencies are all healthy.
2. Log signatures (the node's own errors and its callers' errors naming it) map to a fix, in order:
   refused → rollback if the node's config changed, else restart; timeout → the slow link's sidecar
   (restart the dependency named in the timeouts); auth → roll back the password; pool → raise the
   pool size; amplification > 2 → cut retries and add back-off on the callers; otherwise roll back
   the last deploy.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import urllib.request
from collections import Counter
from typing import Any

from compute.sregym.app.topology import DEPS, SERVICES
from compute.sregym.tools import AgentTools, StepBudgetExceeded

SIGNATURES = [
    ("refused", re.compile(r"ECONNREFUSED|connection refused|no healthy upstream|connection reset", re.I)),
    ("timeout", re.compile(r"timeout", re.I)),
    ("auth", re.compile(r"password authentication failed", re.I)),
    ("pool", re.compile(r"pool exhausted", re.I)),
]
CALLERS = {s: [c for c, deps in DEPS.items() if s in deps] for s in SERVICES}


class ScriptedAgent:
    name = "scripted"

    def __init__(self, window_s: float = 10.0, sigmas: float = 3.0) -> None:
        self.window_s, self.sigmas = window_s, sigmas
        self.notes: dict[str, Any] = {}

    async def anomalies(self, tools: AgentTools) -> dict[str, str]:
        base = tools.baseline()
        services = {s["name"]: s for s in await tools.list_services()}
        out = {}
        for name in SERVICES:
            if services[name]["ready"] == 0:
                out[name] = "no ready replica"
                continue
            err = [v for _, v in await tools.query_metrics(name, "err", self.window_s)]
            p95 = [v for _, v in await tools.query_metrics(name, "p95", self.window_s)]
            (e_mu, e_sd), (p_mu, p_sd) = base[name]["err"], base[name]["p95"]
            e_now = statistics.fmean(err) if err else 0.0
            p_now = statistics.median(p95) if p95 else 0.0
            if e_now > e_mu + self.sigmas * e_sd + 0.01:
                out[name] = f"error rate {e_now:.2f} > {e_mu:.2f} + {self.sigmas:g}σ"
            elif p_now > p_mu + self.sigmas * p_sd + 0.01:
                out[name] = f"p95 {p_now * 1000:.0f} ms > {p_mu * 1000:.0f} ms + {self.sigmas:g}σ"
        return out

    async def run(self, tools: AgentTools, fault_expected: bool | None = None) -> None:
        try:
            await self._run(tools)
        except StepBudgetExceeded:
            pass

    async def _run(self, tools: AgentTools) -> None:
        anomalous = await self.anomalies(tools)
        self.notes["anomalous"] = anomalous
        await tools.submit_detection("Yes" if anomalous else "No")
        if not anomalous:
            return
        deepest = [s for s in anomalous if not any(d in anomalous for d in DEPS[s])]
        logs = await tools.get_logs(None, window_s=self.window_s + 5, level="error", limit=200)
        primary = max(deepest, key=lambda s: sum(1 for r in logs if r["service"] == s or s in r["msg"].split("/")[0]))
        msgs = [r["msg"] for r in logs if r["service"] == primary]
        msgs += [r["msg"] for r in logs if r["service"] in CALLERS[primary] and r["msg"].startswith(f"{primary}/")]
        counts = Counter(kind for m in msgs for kind, pat in SIGNATURES if pat.search(m))
        amp = 0.0
        for caller in CALLERS[primary]:
            series = await tools.query_metrics(caller, "amplification", self.window_s)
            amp = max([amp, *[v for _, v in series]])
        cfg = await tools.get_config(primary)
        changed = cfg["active_version"] > 1
        kind = next((k for k, _ in SIGNATURES if counts.get(k)), "amplification" if amp > 2 else "none")
        # the dependency a timeout/reset names: "<dep>/<path>: upstream request timeout"
        named = Counter(m.split("/")[0] for m in msgs if re.match(r"^\w+/", m) and m.split("/")[0] in SERVICES)
        dep = named.most_common(1)[0][0] if named else primary
        category, action = {
            "refused": (
                "misconfig" if changed else "process",
                ("rollback" if changed else "restart", dep if not changed else primary),
            ),
            "timeout": ("network", ("restart", dep)),
            "auth": ("misconfig", ("rollback", primary)),
            "pool": ("resource", ("pool", primary)),
            "amplification": ("metastable", ("retries", primary)),
            "none": ("misconfig", ("rollback", primary)),
        }[kind]
        self.notes.update(signature=kind, counts=dict(counts), amplification=amp, action=action)
        await tools.submit_diagnosis({
            "localization": deepest, "component": primary, "category": category,
            "text": f"{primary}: {anomalous[primary]}; signature {kind} ({dict(counts)}); amplification {amp:.2f}",
        })  # fmt: skip
        verb, target = action
        if verb == "restart":
            await tools.restart(target)
        elif verb == "rollback":
            await tools.rollback(target)
        elif verb == "pool":
            size = int(cfg["current"].get("pool_size", 4))
            await tools.patch_config(target, {"pool_size": size * 4})
        elif verb == "retries":
            for caller in CALLERS[target]:
                await tools.patch_config(caller, {"retries": 0, "backoff_ms": 100})
        await asyncio.sleep(3.0)
        await tools.submit_mitigation()


class LLMAgent:
    """ReAct over any OpenAI-compatible ``/chat/completions`` endpoint, with step and token caps.

    Each reply must be one JSON object {"thought": …, "tool": name, "args": {…}}; the observation
    is sent back as the next user message. Tools are those of ``AgentTools`` (submit_* included).
    """

    name = "llm"
    SYSTEM = (
        "You are an SRE agent on a live microservice shop (gateway, catalog, recommender, cart, checkout, payment, "
        "datastore). Tools: list_services(), get_topology(), get_logs(service, window_s, level), "
        "query_metrics(service, metric in rps|err|p95|queue|pool_waiters|amplification|ready, window_s), "
        "get_traces(window_s), get_config(service), patch_config(service, patch), rollback(service), restart(service), "
        "scale(service, replicas), shell(command), submit_detection(answer: Yes|No), "
        'submit_diagnosis(diagnosis: {"localization": [..], "component": .., "category": '
        'process|misconfig|network|resource|datastore|metastable, "text": ..}), submit_mitigation(). '
        "First decide whether there is an incident and call submit_detection. If No, stop. Otherwise diagnose, "
        "submit_diagnosis, fix it, then submit_mitigation. Reply with exactly one JSON object "
        '{"thought": "...", "tool": "...", "args": {...}} per turn.'
    )

    def __init__(self, base_url: str, model: str = "gpt-4o-mini", api_key: str = "", max_tokens: int = 20000, timeout_s: float = 60.0) -> None:  # fmt: skip
        self.base_url, self.model, self.api_key = base_url.rstrip("/"), model, api_key
        self.max_tokens, self.timeout_s = max_tokens, timeout_s
        self.tokens = 0

    def _complete(self, messages: list[dict[str, str]]) -> str:
        body = json.dumps({"model": self.model, "messages": messages, "temperature": 0.2, "max_tokens": 512}).encode()
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:  # noqa: S310 - user-configured endpoint
            out = json.loads(resp.read())
        self.tokens += int(out.get("usage", {}).get("total_tokens", 0))
        return out["choices"][0]["message"]["content"]

    async def run(self, tools: AgentTools, fault_expected: bool | None = None) -> None:
        messages = [{"role": "system", "content": self.SYSTEM}, {"role": "user", "content": "Begin."}]
        while tools.steps < tools.max_steps and self.tokens < self.max_tokens:
            try:
                reply = await asyncio.to_thread(self._complete, messages)
            except (OSError, ValueError, KeyError) as exc:
                tools.transcript.append({"t": round(tools.env.sup.now(), 2), "tool": "llm_error", "result": str(exc)})
                return
            messages.append({"role": "assistant", "content": reply})
            try:
                m = re.search(r"\{.*\}", reply, re.S)
                action = json.loads(m.group(0)) if m else {}
                tool, args = str(action.get("tool", "")), dict(action.get("args") or {})
            except (ValueError, TypeError):
                tool, args = "", {}
            if not tool:
                messages.append(
                    {"role": "user", "content": "Reply with one JSON object with keys thought, tool, args."}
                )
                continue
            try:
                obs = await tools.call(tool, args)
            except StepBudgetExceeded:
                return
            if tool == "submit_mitigation" or (
                tool == "submit_detection" and str(args.get("answer", "")).lower().startswith("n")
            ):
                return
            messages.append({"role": "user", "content": "Observation: " + json.dumps(obs, default=str)[:1500]})

"""Agent tools (spec §2 "Agent tools"; AIOpsLab's action set): read, act, an allow-listed shell, submit.

Every call counts one step and is appended to the transcript. The tools never expose the admin
token, the mesh admin port or replica admin endpoints: ``shell`` refuses them (tested).
"""

from __future__ import annotations

import json
import re
import shlex
import statistics
from typing import Any

from compute.sregym.app.httpio import HttpError, request
from compute.sregym.app.topology import DEPS, SERVICES

PATCHABLE = {"retries", "backoff_ms", "timeout_ms", "pool_size", "queue_limit", "c", "kv_maxmemory", "pool_timeout_ms"}
HIDDEN = {"admin_token", "secret_path", "log_path", "span_path", "seed", "kind"}
SHELL_ALLOWED = {"ls", "cat", "tail", "grep", "ps", "curl"}


class StepBudgetExceeded(Exception):
    pass


class AgentTools:
    def __init__(self, env: Any, max_steps: int = 20, emit: Any = None) -> None:
        self.env, self.max_steps = env, max_steps
        self.steps = 0
        self.transcript: list[dict[str, Any]] = []
        self.submissions: dict[str, dict[str, Any]] = {}
        self.emit = emit or (lambda *a, **k: None)

    # -- bookkeeping ----------------------------------------------------------------------------
    def _step(self, tool: str, args: dict[str, Any], act: bool = False) -> None:
        if self.steps >= self.max_steps and not tool.startswith("submit"):
            raise StepBudgetExceeded(f"step budget of {self.max_steps} exhausted")
        self.steps += 0 if tool.startswith("submit") else 1
        entry = {"t": round(self.env.sup.now(), 2), "step": self.steps, "tool": tool, "args": args}
        self.transcript.append(entry)
        if act:
            self.env.sup.event("agent", args.get("service", ""), f"{tool} {json.dumps(args)}")
        self.emit("transcript", entry)

    def _obs(self, result: Any) -> Any:
        self.transcript[-1]["result"] = _short(result)
        return result

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        """Dispatch by name (for the LLM agent); unknown tools and bad arguments become error strings."""
        fn = getattr(self, tool, None)
        if tool.startswith("_") or tool in {"call", "baseline"} or not callable(fn):
            return f"error: unknown tool {tool!r}"
        try:
            return await fn(**args)
        except StepBudgetExceeded:
            raise
        except (TypeError, KeyError, ValueError) as exc:
            return f"error: {exc}"

    # -- read -----------------------------------------------------------------------------------
    async def list_services(self) -> list[dict[str, Any]]:
        self._step("list_services", {})
        sup = self.env.sup
        out = [{"name": n, "replicas": st.replicas_desired, "ready": sum(r.ready for r in st.replicas),
                "version": st.config["version"], "restarts": st.restarts - 1} for n, st in sup.services.items()]  # fmt: skip
        return self._obs(out)

    async def get_topology(self) -> dict[str, list[str]]:
        self._step("get_topology", {})
        return self._obs(DEPS)

    async def get_logs(
        self, service: str | None = None, window_s: float = 30.0, level: str | None = "error", limit: int = 30
    ) -> list[dict]:
        self._step("get_logs", {"service": service, "window_s": window_s, "level": level})
        self.env.obs.ingest()
        return self._obs(self.env.obs.logs(service, self.env.sup.now() - window_s, level, min(int(limit), 200)))

    async def query_metrics(self, service: str, metric: str = "err", window_s: float = 30.0) -> list[list[float]]:
        self._step("query_metrics", {"service": service, "metric": metric, "window_s": window_s})
        if metric not in {
            "rps",
            "err",
            "p50",
            "p95",
            "queue",
            "inflight",
            "pool_waiters",
            "amplification",
            "ready",
            "rss_mb",
        }:
            return self._obs(f"error: unknown metric {metric!r}")
        rows = self.env.obs.series(service, metric, self.env.sup.now() - float(window_s))
        return self._obs([[round(t, 1), round(v, 4)] for t, v in rows])

    async def get_traces(self, window_s: float = 30.0, errors_only: bool = True, limit: int = 3) -> list[list[dict]]:
        self._step("get_traces", {"window_s": window_s, "errors_only": errors_only})
        self.env.obs.ingest()
        return self._obs(self.env.obs.traces(self.env.sup.now() - window_s, errors_only, min(int(limit), 10)))

    async def get_config(self, service: str) -> dict[str, Any]:
        self._step("get_config", {"service": service})
        st = self.env.sup.services[service]
        cfg = {k: v for k, v in st.config.items() if k not in HIDDEN}
        if "db_password" in cfg:
            cfg["db_password"] = f"****{cfg['db_password'][-4:]}"
        history = []
        for prev, cur in zip(st.history, st.history[1:], strict=False):
            history.append(
                {
                    "version": cur["version"],
                    "changed": sorted(k for k in cur if cur.get(k) != prev.get(k) and k != "version"),
                }
            )
        return self._obs({"current": cfg, "history": history, "active_version": st.config["version"]})

    def baseline(self) -> dict[str, dict[str, float]]:
        """The SLO dashboard's baseline band per service (mean and σ of err and p95 over the deploy-time window)."""
        out = {}
        t0, t1 = self.env.baseline_window
        for name in SERVICES:
            band = {}
            for m in ("err", "p95", "amplification"):
                vals = [v for _, v in self.env.obs.series(name, m, t0, t1)]
                band[m] = (statistics.fmean(vals) if vals else 0.0, statistics.pstdev(vals) if len(vals) > 1 else 0.0)
            out[name] = band
        return out

    # -- act ------------------------------------------------------------------------------------
    async def patch_config(self, service: str, patch: dict[str, Any]) -> str:
        self._step("patch_config", {"service": service, "patch": patch}, act=True)
        bad = set(patch) - PATCHABLE
        if bad:
            return self._obs(f"error: keys not patchable: {sorted(bad)}")
        v = await self.env.sup.deploy(service, patch, note="agent patch")
        return self._obs(f"deployed {service} v{v}")

    async def rollback(self, service: str) -> str:
        self._step("rollback", {"service": service}, act=True)
        v = await self.env.sup.rollback(service)
        return self._obs(f"{service} now at v{v}")

    async def restart(self, service: str) -> str:
        self._step("restart", {"service": service}, act=True)
        await self.env.sup.restart(service)
        return self._obs(f"restarted {service}")

    async def scale(self, service: str, replicas: int) -> str:
        self._step("scale", {"service": service, "replicas": replicas}, act=True)
        await self.env.sup.scale(service, int(replicas))
        return self._obs(f"{service} scaled to {self.env.sup.services[service].replicas_desired}")

    async def shell(self, command: str) -> str:
        """Read-only, allow-listed shell over the run's logs: ls, cat, tail, grep, ps, curl (GET, no admin)."""
        self._step("shell", {"command": command})
        return self._obs(await self._shell(command))

    async def _shell(self, command: str) -> str:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            return f"refused: {exc}"
        if not argv or argv[0] not in SHELL_ALLOWED or any(c in command for c in ";|&`$><"):
            return f"refused: only {sorted(SHELL_ALLOWED)} without pipes or redirection"
        logs = (self.env.sup.run_dir / "logs").resolve()
        if argv[0] == "ps":
            return "\n".join(
                f"{n} pid={r.proc.pid} ready={r.ready}" for n, st in self.env.sup.services.items() for r in st.replicas
            )
        if argv[0] == "curl":
            m = re.match(r"^(?:http://)?(?:127\.0\.0\.1|localhost):(\d+)(/\S*)?$", argv[-1])
            if not m:
                return "refused: curl only to http://127.0.0.1:<service port>/<path>"
            port, path = int(m.group(1)), m.group(2) or "/"
            sidecars = {st.proxy_port for st in self.env.sup.services.values()}
            if path.startswith("/admin") or port not in sidecars or any(a in {"-X", "-d", "--data"} for a in argv):
                return "refused: admin and injector endpoints are not reachable from agent tools"
            try:
                status, out = await request(port, "GET", path, timeout=2.0)
                return f"HTTP {status}\n{out[:2000].decode(errors='replace')}"
            except HttpError as exc:
                return f"curl: {exc}"
        files = [a for a in argv[1:] if not a.startswith("-")]
        paths = [(logs / f).resolve() for f in files]
        if argv[0] == "ls":
            return "\n".join(sorted(p.name for p in logs.iterdir()))
        if any(p.parent != logs for p in paths[(1 if argv[0] == "grep" else 0) :]):
            return "refused: only files under logs/ are readable"
        if argv[0] == "grep" and len(files) >= 2:
            pat = re.compile(files[0])
            return "\n".join(line for line in paths[1].read_text().splitlines() if pat.search(line))[-4000:]
        if argv[0] in {"cat", "tail"} and paths and paths[-1].exists():
            lines = paths[-1].read_text().splitlines()
            return "\n".join(lines[-20:] if argv[0] == "tail" else lines)[-4000:]
        return "error: no such file"

    # -- submit ---------------------------------------------------------------------------------
    async def submit_detection(self, answer: str) -> str:
        self._step("submit_detection", {"answer": answer})
        self.submissions["detection"] = {"t": self.env.sup.now(), "answer": answer}
        return "ok"

    async def submit_diagnosis(self, diagnosis: dict[str, Any] | str) -> str:
        self._step("submit_diagnosis", {"diagnosis": diagnosis})
        if isinstance(diagnosis, str):
            try:
                diagnosis = json.loads(diagnosis)
            except ValueError:
                diagnosis = {"text": diagnosis}
        self.submissions["diagnosis"] = {"t": self.env.sup.now(), **diagnosis}
        return "ok"

    async def submit_mitigation(self) -> str:
        self._step("submit_mitigation", {})
        self.submissions["mitigation"] = {"t": self.env.sup.now()}
        return "ok"


def _short(x: Any, n: int = 600) -> Any:
    s = json.dumps(x, default=str) if not isinstance(x, str) else x
    return s if len(s) <= n else s[:n] + "…"

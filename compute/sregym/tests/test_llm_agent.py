"""The LLM ReAct agent against a mock OpenAI-compatible server on loopback: tool dispatch, caps, transcript."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

from compute.sregym.agents import LLMAgent
from compute.sregym.tools import AgentTools

SCRIPT = [
    {"thought": "look at the graph", "tool": "get_topology", "args": {}},
    "not json at all",  # the agent asks again instead of crashing
    {"thought": "payment is down", "tool": "submit_detection", "args": {"answer": "Yes"}},
    {
        "tool": "submit_diagnosis",
        "args": {"diagnosis": {"localization": ["payment"], "component": "payment", "category": "process"}},
    },
    {"tool": "restart", "args": {"service": "payment"}},
    {"tool": "submit_mitigation", "args": {}},
    {"tool": "restart", "args": {"service": "cart"}},  # never reached: the agent stops after submitting
]


def _mock_server(script: list) -> tuple[ThreadingHTTPServer, list[dict]]:
    seen: list[dict] = []

    class H(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            step = script[min(len(seen) - 1, len(script) - 1)]
            content = step if isinstance(step, str) else json.dumps(step)
            out = json.dumps({"choices": [{"message": {"content": content}}], "usage": {"total_tokens": 100}}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: object) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, seen


class FakeSup:
    def __init__(self) -> None:
        self.restarted: list[str] = []
        self.events: list = []

    def now(self) -> float:
        return 1.0

    def event(self, *a: object) -> None:
        self.events.append(a)

    async def restart(self, name: str) -> None:
        self.restarted.append(name)


def test_llm_agent_follows_tool_calls_and_stops_after_mitigation() -> None:
    srv, seen = _mock_server(SCRIPT)
    try:
        sup = FakeSup()
        tools = AgentTools(SimpleNamespace(sup=sup), max_steps=10)
        agent = LLMAgent(f"http://127.0.0.1:{srv.server_address[1]}/v1", model="mock")
        asyncio.run(agent.run(tools))
    finally:
        srv.shutdown()
    assert sup.restarted == ["payment"]  # the action after submit_mitigation never ran
    assert tools.submissions["detection"]["answer"] == "Yes"
    assert tools.submissions["diagnosis"]["component"] == "payment" and "mitigation" in tools.submissions
    assert [e["tool"] for e in tools.transcript] == [
        "get_topology",
        "submit_detection",
        "submit_diagnosis",
        "restart",
        "submit_mitigation",
    ]
    assert len(seen) == 6 and seen[0]["model"] == "mock" and agent.tokens == 600
    assert "Observation" in seen[1]["messages"][-1]["content"]


def test_llm_agent_respects_the_step_and_token_caps() -> None:
    srv, seen = _mock_server([{"tool": "get_topology", "args": {}}])  # an agent that never submits
    try:
        tools = AgentTools(SimpleNamespace(sup=FakeSup()), max_steps=4)
        asyncio.run(LLMAgent(f"http://127.0.0.1:{srv.server_address[1]}", model="m").run(tools))
        assert tools.steps == 4 and len(seen) == 4
        tools = AgentTools(SimpleNamespace(sup=FakeSup()), max_steps=50)
        asyncio.run(LLMAgent(f"http://127.0.0.1:{srv.server_address[1]}", model="m", max_tokens=250).run(tools))
        assert tools.steps == 3  # 100 tokens per call: stops once 250 are spent
    finally:
        srv.shutdown()


def test_llm_checklist_judge_threshold() -> None:
    from compute.sregym.oracles import llm_judge

    passing = {"localization": 1, "characterization": 0.8, "scope": 0.5, "trace_coherence": 0.6}  # mean 0.725
    failing = {"localization": 1, "characterization": 0.5, "scope": 0.5, "trace_coherence": 0.6}  # mean 0.65
    for scores, ok in ((passing, True), (failing, False)):
        srv, seen = _mock_server([scores])
        try:
            v = llm_judge(
                {"component": "catalog"}, "[fault_spec] component=catalog", f"http://127.0.0.1:{srv.server_address[1]}"
            )
        finally:
            srv.shutdown()
        assert v["success"] is ok and abs(v["detail"]["mean"] - sum(scores.values()) / 4) < 1e-9
        assert "component=catalog" in seen[0]["messages"][1]["content"]

"""OpenAICompatBackend against a local fake server: tool schema, raw-prefix completions, key handling."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from compute.spell.backends import BackendError, OpenAICompatBackend
from compute.spell.harness import Harness, ToolBox, is_error


class _Fake(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Fake.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        suffix = '  \'(str "hi from the endpoint"))))'
        if self.path.endswith("/completions") and "prompt" in body:
            out = {"choices": [{"text": suffix}], "usage": {"prompt_tokens": 5, "completion_tokens": 3}}
        elif "tools" in body:
            call = {"function": {"name": "spell_suffix", "arguments": json.dumps({"suffix": suffix})}}
            out = {"choices": [{"message": {"tool_calls": [call]}}]}
        else:
            out = {"choices": [{"message": {"content": "```clojure\n" + suffix + "\n```"}}]}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a: Any) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[str]:
    _Fake.requests = []
    srv = HTTPServer(("127.0.0.1", 0), _Fake)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_port}/v1"
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("transport", ["tool_call", "message", "completions"])
def test_endpoint_backend_drives_the_harness(server: str, transport: str) -> None:
    b = OpenAICompatBackend(server, "tiny", api_key="sk-secret", transport=transport, timeout_s=5)
    h = Harness(b, ToolBox())
    assert h.run("say hi") == "hi from the endpoint"
    req = _Fake.requests[0]
    assert req["auth"] == "Bearer sk-secret"
    assert "sk-secret" not in json.dumps(h.trace) and "sk-secret" not in repr(b)


def test_tool_call_transport_sends_the_spell_suffix_schema(server: str) -> None:
    OpenAICompatBackend(server, "tiny", transport="tool_call").complete("SYS", "PREFIX(")
    body = _Fake.requests[0]["body"]
    fn = body["tools"][0]["function"]
    assert _Fake.requests[0]["path"] == "/v1/chat/completions"
    assert fn["name"] == "spell_suffix" and fn["parameters"]["required"] == ["suffix"]
    assert body["tool_choice"]["function"]["name"] == "spell_suffix"


def test_completions_transport_sends_the_raw_prefix(server: str) -> None:
    b = OpenAICompatBackend(server, "tiny", transport="completions")
    b.complete("SYS", ";; task\n(quine completion (eval (do\n")
    req = _Fake.requests[0]
    assert req["path"] == "/v1/completions" and req["body"]["prompt"].endswith(";; task\n(quine completion (eval (do\n")
    assert b.usage == {"prompt_tokens": 5, "completion_tokens": 3}


def test_unreachable_endpoint_is_an_error_value_not_a_crash() -> None:
    b = OpenAICompatBackend("http://127.0.0.1:9/v1", "m", timeout_s=1)
    v = Harness(b, ToolBox()).run("t")
    assert is_error(v)


def test_no_endpoint_configured() -> None:
    with pytest.raises(BackendError):
        OpenAICompatBackend("", "m")

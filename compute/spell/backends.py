"""Model backends (spec §2 "Backends"): scripted (CI, defaults), trace replay, OpenAI-compatible HTTP.

Nothing is contacted unless a user configures ``base_url``; the API key is passed in by the caller (settings /
environment) and is never written to traces or run configs.  HTTP uses the standard library (urllib).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compute.spell.harness import sha

Rule = tuple[str, "str | Callable[[re.Match[str], str], str]"]


class BackendError(RuntimeError):
    """The backend could not produce a completion (HTTP failure, no recorded trace, …)."""


@dataclass
class ScriptedBackend:
    """Ordered rules ``(regex on the prefix tail, suffix or fn(match, prefix) -> suffix)``; first match wins.

    Deterministic.  If no rule matches, ``fallback`` is returned (by default a final value ``:no-rule``).
    """

    rules: list[Rule]
    tail_chars: int = 4000
    fallback: str = "'(quote :no-rule))))"
    calls: int = 0

    def complete(self, system: str, prefix: str) -> str:
        self.calls += 1
        tail = prefix[-self.tail_chars :]
        for pattern, out in self.rules:
            m = re.search(pattern, tail, flags=re.S)
            if m:
                return out(m, prefix) if callable(out) else out
        return self.fallback


@dataclass
class ReplayBackend:
    """Replays a recorded trace: each prefix (by sha256) gets its recorded suffixes in order."""

    trace: list[dict[str, str]]
    _queues: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for t in self.trace:
            self._queues.setdefault(t["prefix_sha"], []).append(t["suffix"])

    def complete(self, system: str, prefix: str) -> str:
        q = self._queues.get(sha(prefix))
        if not q:
            raise BackendError("replay: no recorded completion for this prefix (the run diverged from the trace)")
        return q.pop(0)


TOOL_SCHEMA = {
    "type": "function",
    "function": {
        "name": "spell_suffix",
        "description": "Continue the Spell program: the text appended to the prefix you were given.",
        "parameters": {
            "type": "object",
            "properties": {"suffix": {"type": "string", "description": "Spell source continuing the prefix"}},
            "required": ["suffix"],
        },
    },
}


@dataclass
class OpenAICompatBackend:
    """Any OpenAI-compatible endpoint.  Transports (spec §2):

    * ``tool_call``   — chat/completions with one function ``spell_suffix(suffix: str)``, forced;
    * ``message``     — chat/completions, the reply text is the suffix (code fences stripped);
    * ``completions`` — /completions with the raw prefix as the prompt (true prefill).
    """

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    transport: str = "tool_call"
    timeout_s: float = 60.0
    max_tokens: int = 1024
    temperature: float = 0.0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    def __post_init__(self) -> None:
        if not self.base_url:
            raise BackendError("no endpoint configured (base_url is empty)")
        if self.transport not in ("tool_call", "message", "completions"):
            raise BackendError(f"unknown transport {self.transport!r}")

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(
            self.base_url.rstrip("/") + path,
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}),
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:  # noqa: S310 - user-configured URL
                data = json.loads(resp.read().decode())
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as exc:
            raise BackendError(f"endpoint error: {exc}") from None
        for k in self.usage:
            self.usage[k] += int((data.get("usage") or {}).get(k, 0))
        return data

    def complete(self, system: str, prefix: str) -> str:
        if self.transport == "completions":
            data = self._post(
                "/completions",
                {
                    "model": self.model,
                    "prompt": system + "\n\n" + prefix,
                    "max_tokens": self.max_tokens,
                    "temperature": self.temperature,
                },
            )
            return data["choices"][0]["text"]
        user = "Continue this Spell program. Reply with the suffix only.\n\n" + prefix
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        if self.transport == "tool_call":
            body["tools"] = [TOOL_SCHEMA]
            body["tool_choice"] = {"type": "function", "function": {"name": "spell_suffix"}}
        data = self._post("/chat/completions", body)
        msg = data["choices"][0]["message"]
        if self.transport == "tool_call":
            calls = msg.get("tool_calls") or []
            if not calls:
                raise BackendError("the model did not call spell_suffix")
            try:
                return json.loads(calls[0]["function"]["arguments"])["suffix"]
            except (KeyError, json.JSONDecodeError) as exc:
                raise BackendError(f"bad spell_suffix arguments: {exc}") from None
        text = msg.get("content") or ""
        m = re.search(r"```(?:\w+)?\n(.*?)```", text, flags=re.S)
        return m.group(1) if m else text

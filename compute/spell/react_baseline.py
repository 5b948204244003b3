"""Fixed-orchestrator baseline: ReAct (Yao et al., 2022) with the same tools and backend interface.

The harness owns the loop; the model sees an append-only transcript
``Question / (Thought, Action, Observation)*`` and every observation stays in context, so the prompt grows
with every tool result (spec §2 "Baselines").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from compute.spell.backends import ScriptedBackend
from compute.spell.evaluator import SpellError
from compute.spell.harness import Backend, ToolBox, n_tokens
from compute.spell.tasks import NEEDLE_RE

REACT_SYSTEM = """Answer the question by interleaving Thought, Action and Observation lines.
Actions: ls[] lists files; read_range[path, start, end] reads characters; calc[expression] does arithmetic;
finish[answer] ends with the answer.  Write one Thought and one Action per reply; the Observation is added for you."""

_ACTION = re.compile(r"Action:\s*(\w+)\[(.*?)\]\s*\Z", re.S)


@dataclass
class ReactResult:
    answer: str | None
    steps: int
    prompt_tokens: list[int] = field(default_factory=list)  # per step: system + transcript
    total_tokens: int = 0
    error: str = ""

    @property
    def peak(self) -> int:
        return max(self.prompt_tokens, default=0)


def _tool(tools: ToolBox, name: str, arg: str) -> str:
    t = tools.table()
    parts = [a.strip() for a in arg.split(",")] if arg.strip() else []
    if name == "ls":
        return " ".join(t["io/ls"]())
    if name == "read_range":
        return t["io/read-range"](parts[0], int(parts[1]), int(parts[2]))
    if name == "calc":
        return str(t["io/calc"](arg))
    raise SpellError(f"unknown action {name}")


def run_react(backend: Backend, tools: ToolBox, question: str, max_steps: int = 200, budget: int = 8000) -> ReactResult:
    """The ReAct loop; fails with 'context overflow' once the prompt exceeds ``budget`` tokens."""
    transcript = f"Question: {question}\n"
    res = ReactResult(None, 0)
    for _ in range(max_steps):
        ptoks = n_tokens(REACT_SYSTEM) + n_tokens(transcript)
        if ptoks > budget:
            res.error = f"context overflow ({ptoks} > {budget} tokens)"
            return res
        res.prompt_tokens.append(ptoks)
        out = backend.complete(REACT_SYSTEM, transcript)
        res.steps += 1
        res.total_tokens += ptoks + n_tokens(out)
        m = _ACTION.search(out)
        if m is None:
            transcript += out + "\nObservation: no Action found; write Action: name[args]\n"
            continue
        if m.group(1) == "finish":
            res.answer = m.group(2)
            return res
        try:
            obs = _tool(tools, m.group(1), m.group(2))
        except (SpellError, IndexError, ValueError) as exc:
            obs = f"error: {exc}"
        transcript += out.rstrip() + f"\nObservation: {obs}\n"
    res.error = "max steps"
    return res


def react_needle_backend(chunk_chars: int) -> ScriptedBackend:
    """Scripted ReAct agent for the needle task: same reading order and chunk size as the Spell agent."""

    def step(m: re.Match[str], transcript: str) -> str:
        obs = re.findall(r"Observation: (.*)", transcript)
        if not obs:
            return "Thought: list the files first.\nAction: ls[]"
        hit = re.search(NEEDLE_RE, obs[-1])
        if hit:
            return f"Thought: found the code.\nAction: finish[{hit.group(1)}]"
        files = obs[0].split()
        reads = re.findall(r"Action: read_range\[(\S+), (\d+), (\d+)\]", transcript)
        if not reads:
            return f"Thought: read the first file.\nAction: read_range[{files[0]}, 0, {chunk_chars}]"
        path, start = reads[-1][0], int(reads[-1][1])
        if len(obs[-1]) >= chunk_chars:
            nxt = start + chunk_chars
            return f"Thought: keep reading {path}.\nAction: read_range[{path}, {nxt}, {nxt + chunk_chars}]"
        i = files.index(path) + 1
        if i >= len(files):
            return "Thought: no code anywhere.\nAction: finish[none]"
        return f"Thought: next file.\nAction: read_range[{files[i]}, 0, {chunk_chars}]"

    return ScriptedBackend([(r"\A", step)], tail_chars=10**9)


def one_shot(backend: Backend, question: str) -> tuple[str, int]:
    """One completion, no tools: (answer text, tokens used)."""
    out = backend.complete("Answer with the final number only.", question)
    return out.strip(), n_tokens(question) + n_tokens(out)


def react_result_summary(r: ReactResult) -> dict[str, Any]:
    return {"answer": r.answer, "steps": r.steps, "peak": r.peak, "total_tokens": r.total_tokens, "error": r.error}


def react_gsm_backend() -> ScriptedBackend:
    """Scripted ReAct agent for the GSM problems: one calc action, then finish."""
    from compute.spell.tasks import gsm_expression

    def step(m: re.Match[str], transcript: str) -> str:
        obs = re.findall(r"Observation: (.*)", transcript)
        if obs:
            return f"Thought: the calculator gave the answer.\nAction: finish[{obs[-1].strip()}]"
        q = re.search(r"Question: (.*)", transcript).group(1)  # type: ignore[union-attr]
        return f"Thought: compute it.\nAction: calc[{gsm_expression(q)}]"

    return ScriptedBackend([(r"\A", step)], tail_chars=10**9)


def one_shot_gsm_backend() -> ScriptedBackend:
    """Scripted one-shot model: answers directly (it reads the template; offline it is exact by construction)."""
    from compute.spell.harness import calc
    from compute.spell.tasks import gsm_expression

    return ScriptedBackend([(r"\A(.*)\Z", lambda m, p: str(calc(gsm_expression(p.strip()))))], tail_chars=10**9)

"""The self-programmed-execution (SPE) harness: the completion is the program, the harness only evaluates it.

Spec §2 "Turn semantics"::

    prefix = init(task)
    loop:
        suffix = backend.complete(system, prefix)
        v = eval(parse(prefix + suffix))
        if v is Turn: prefix = apply_edits(reopen(prefix + suffix)) + spliced literals
        else: return v

Effects run only from the quoted trailing expression of the wrapper; once the next turn appends code the old
trailing expression is inert data.  The **effect journal** (a design addition, not part of Spell) records every
effect (turn, call path, sha256 of the canonical form, result hash, source offset) and counts a *replay* when an
effect fires from text that already existed in the prefix the model was given, i.e. was written in a turn ≤ n.
"""

from __future__ import annotations

import ast
import hashlib
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from compute.spell.edits import apply_edits, reopen, wrapper_do
from compute.spell.evaluator import Effect, EffectContext, Evaluator, SpellError, Turn
from compute.spell.reader import Keyword, Map, ReadError, SList, Symbol, Vector, literal, pr_str, read_all, to_str

OPEN = "(quine completion (eval (do\n"
CLOSE = ")))"

SYSTEM_PROMPT = """You write Spell, a small Lisp.  Your reply continues the program you are given; the harness \
appends it to the prefix, reads the whole text and evaluates it.  The program has the shape
  (quine completion (eval (do  <pure forms…>  '(<trailing effect>))))
Everything in the do block is pure: def, defn, fn, let, if, when, cond, and, or, str, count, subs, get, conj, \
first, rest, map, filter, reduce, strings/*, math/*.  Functions see their caller's variables (dynamic scope).
Only the final quoted form runs with effects.  Effects:
  (!call-now x (io/read "path"))  run tools, bind x, and continue: you will see (def x <result>) next turn
  (!peek x (io/read "path"))      like !call-now, but the call and its result vanish one turn later
  (!extend)                       continue writing this program next turn
  (!llm-self "<prefix>")          a fresh copy of you continues <prefix>; returns its final value
  (leaf-llm "question")           plain-text answer from a helper model
Tools: io/ls, io/read, io/read-range, io/grep, io/write, io/calc, io/flip.  Two !llm-self calls in one \
expression run as a fork; a trailing form without effects is your final answer.
Editing: (prune k) deletes the k previous forms and itself next turn; (rethink "note") does the same and leaves \
(think "note"); (persist name expr) keeps name's value as a literal.  Large results arrive as (stored "ID") with \
a truncated preview.  Close the program with ))) when you end a turn."""


def n_tokens(text: str) -> int:
    """Token estimate: ceil(chars / 4) (design choice; no tokenizer is shipped offline)."""
    return (len(text) + 3) // 4


def init_prefix(task: str) -> str:
    """The first prefix of a run: the task as comments, then the open wrapper."""
    comment = "\n".join(";; " + line for line in task.splitlines() or [""])
    return comment + "\n" + OPEN


def error_value(message: str) -> Map:
    return Map({Keyword("error"): message})


def is_error(v: Any) -> bool:
    return isinstance(v, dict) and Keyword("error") in v


class Backend(Protocol):
    def complete(self, system: str, prefix: str) -> str: ...


# ------------------------------------------------------------------------------------------------
# Tools: an in-memory file system, a calculator and a seeded coin (no shell, no network)
# ------------------------------------------------------------------------------------------------
_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv,
}


def calc(expr: str) -> float | int:
    """Arithmetic on numbers with + - * / // % ** and parentheses; parsed, never executed as Python."""

    def walk(n: ast.AST) -> float | int:
        if isinstance(n, ast.Expression):
            return walk(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            a, b = walk(n.left), walk(n.right)
            if isinstance(n.op, ast.Pow) and abs(b) > 64:
                raise SpellError("io/calc: exponent too large")
            return _OPS[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = walk(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        raise SpellError(f"io/calc: unsupported expression {expr!r}")

    if not isinstance(expr, str) or len(expr) > 500:
        raise SpellError("io/calc takes an arithmetic string of at most 500 characters")
    try:
        v = walk(ast.parse(expr, mode="eval"))
    except (SyntaxError, ZeroDivisionError) as exc:
        raise SpellError(f"io/calc: {exc}") from None
    return int(v) if isinstance(v, float) and v.is_integer() else v


@dataclass
class ToolBox:
    """The ``io/`` namespace: a virtual file system, a calculator and a seeded coin."""

    files: dict[str, str] = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def _read(self, path: str) -> str:
        if path not in self.files:
            raise SpellError(f"io/read: no such file {path!r}")
        return self.files[path]

    def table(self) -> dict[str, Any]:
        def grep(pattern: str) -> SList:
            return Vector(
                f"{p}:{i + 1}:{line}"
                for p, t in self.files.items()
                for i, line in enumerate(t.splitlines())
                if pattern in line
            )

        def write(path: str, text: str) -> str:
            self.files[path] = to_str(text)
            return path

        return {
            "io/ls": lambda: Vector(sorted(self.files)),
            "io/read": self._read,
            "io/read-range": lambda p, s, e: self._read(p)[s:e],
            "io/grep": grep,
            "io/write": write,
            "io/calc": calc,
            "io/flip": lambda: "heads" if self.rng.random() < 0.5 else "tails",
        }


# ------------------------------------------------------------------------------------------------
# Journal and trace
# ------------------------------------------------------------------------------------------------
def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class JournalEntry:
    turn: int
    path: str
    name: str
    key: str  # sha256 of the canonical form
    result: str  # sha256 of the printed result
    origin: int  # source offset of the trailing data that fired it
    prefix_len: int  # length of the prefix the model was given this turn
    replay: bool


@dataclass
class TurnRecord:
    turn: int
    path: str
    depth: int
    prefix_tokens: int
    suffix: str
    outcome: str  # "turn:call" | "turn:peek" | "turn:extend" | "value" | "error"
    message: str = ""
    edits: int = 0
    effects: int = 0


@dataclass
class RunRecord:
    path: str
    parent: str | None
    depth: int
    prefix: str
    value: str = ""
    turns: int = 0
    prefixes: list[str] = field(default_factory=list)


@dataclass
class HarnessConfig:
    """Budgets (spec §2 "Budgets"); each returns a structured error value, never an exception."""

    max_depth: int = 16
    max_turns: int = 64  # per run
    max_prefix_tokens: int = 8000
    max_total_tokens: int = 2_000_000
    max_cost: float = math.inf
    cost_per_1k_tokens: float = 0.0
    store_cap: int = 10_000  # characters; larger tool outputs go to the store
    preview_chars: int = 400
    max_parse_retries: int = 3
    max_steps: int = 200_000  # evaluator steps per program evaluation
    guard_stale: bool = True  # refuse effects from text the model was given (a stale trailing form); off = test only


class _TurnEffects(EffectContext):
    def __init__(self, h: Harness, turn: int, path: str, depth: int, prefix_len: int) -> None:
        self.h, self.turn, self.path, self.depth, self.prefix_len = h, turn, path, depth, prefix_len
        self.turns: list[Turn] = []
        self.n_children = 0
        self.fired = 0

    def table(self) -> dict[str, Any]:
        t: dict[str, Any] = {name: Effect(name, fn) for name, fn in self.h.tools.table().items()}
        t["!llm-self"] = Effect("!llm-self", self._self_call)
        t["!extend"] = Effect("!extend", lambda: Turn("extend"))
        t["!print"] = Effect("!print", lambda *a: Turn("call", [("printed", " ".join(to_str(x) for x in a))]))
        t["!describe"] = Effect("!describe", lambda s: Turn("call", [("description", _describe(s))]))
        t["leaf-llm"] = Effect("leaf-llm", self._leaf)
        return t

    def _self_call(self, prefix: Any) -> Any:
        if not isinstance(prefix, str):
            raise SpellError("!llm-self takes a prefix string")
        child = f"{self.path}/{self.turn}.{self.n_children}"
        self.n_children += 1
        return self.h.run_agent(
            prefix if OPEN.strip() in prefix else init_prefix(prefix), self.depth + 1, child, self.path
        )

    def _leaf(self, prompt: Any) -> str:
        text = to_str(prompt)
        self.h.total_tokens += n_tokens(text)
        out = (
            self.h.backend.complete("Answer in plain text.", text)
            if self.h.leaf_backend is None
            else (self.h.leaf_backend.complete("Answer in plain text.", text))
        )
        self.h.total_tokens += n_tokens(out)
        self.h.leaf_calls += 1
        return out

    def invoke(self, effect: Effect, args: list[Any], form: Any, origin: int) -> Any:
        replay = 0 <= origin < self.prefix_len
        if replay and self.h.cfg.guard_stale:
            raise SpellError(f"{effect.name}: the trailing form is old text; append a new trailing form")
        result = effect.fn(*args)
        if isinstance(result, Turn):
            self.turns.append(result)
        self.fired += 1
        self.h.journal.append(
            JournalEntry(
                turn=self.turn,
                path=self.path,
                name=effect.name,
                key=sha(pr_str(form) if form is not None else effect.name),
                result=sha(pr_str(result) if not isinstance(result, Turn) else repr(result)),
                origin=origin,
                prefix_len=self.prefix_len,
                replay=replay,
            )
        )
        return result


def _describe(s: Any) -> str:
    name = s.name if isinstance(s, Symbol) else to_str(s)
    return f"{name}: see the system prompt" if name else "nothing to describe"


class Harness:
    """Runs SPE agents: one ``run_agent`` per (self-)call, sharing the journal, store and budgets."""

    def __init__(
        self,
        backend: Backend,
        tools: ToolBox | None = None,
        config: HarnessConfig | None = None,
        system: str = SYSTEM_PROMPT,
        leaf_backend: Backend | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        self.backend = backend
        self.leaf_backend = leaf_backend
        self.should_stop = should_stop or (lambda: False)  # polled between turns (cancellation)
        self.tools = tools or ToolBox()
        self.cfg = config or HarnessConfig()
        self.system = system
        self.journal: list[JournalEntry] = []
        self.turns: list[TurnRecord] = []
        self.runs: list[RunRecord] = []
        self.trace: list[dict[str, str]] = []  # (prefix sha, suffix) for ReplayBackend
        self.store: dict[str, Any] = {}
        self.total_tokens = 0
        self.leaf_calls = 0
        self.edits = 0
        self.errors = 0
        self._turn_counter = 0

    @property
    def replays(self) -> int:
        return sum(e.replay for e in self.journal)

    @property
    def peak_prefix_tokens(self) -> int:
        return max((t.prefix_tokens for t in self.turns), default=0)

    def run(self, task: str) -> Any:
        """Run the root agent on a task (its first prefix is ``init_prefix(task)``)."""
        return self.run_agent(init_prefix(task), 0, "root", None)

    def _stored(self, key: str) -> Any:
        if key not in self.store:
            raise SpellError(f"stored: no entry {key!r}")
        return self.store[key]

    def _splice(self, name: str, value: Any) -> tuple[str, int]:
        """``(def name <literal>)`` through the printer; big values go to the store with a truncated preview."""
        text = literal(value)
        if len(text) <= self.cfg.store_cap:
            return f"(def {name} {text})\n", 1
        key = f"s{len(self.store) + 1}"
        self.store[key] = value
        k = self.cfg.preview_chars
        note = f"TRUNCATED preview: first {k} of {len(text)} characters of {name}; full value in (stored {key!r}): "
        return f"(think {pr_str(note + text[:k])})\n(def {name} (stored {pr_str(key)}))\n", 2

    def run_agent(self, prefix: str, depth: int, path: str, parent: str | None) -> Any:
        """One agent (a root run or a self-call): loop turns until the program returns a value."""
        rec = RunRecord(path=path, parent=parent, depth=depth, prefix=prefix)
        self.runs.append(rec)
        if depth > self.cfg.max_depth:
            rec.value = pr_str(v := error_value(f"max_depth {self.cfg.max_depth} exceeded"))
            return v
        failures = 0
        for _ in range(self.cfg.max_turns):
            if self.should_stop():
                return self._finish(rec, error_value("cancelled"))
            ptoks = n_tokens(self.system) + n_tokens(prefix)
            if n_tokens(prefix) > self.cfg.max_prefix_tokens:
                return self._finish(rec, error_value(f"max_prefix_tokens {self.cfg.max_prefix_tokens} exceeded"))
            if self.total_tokens + ptoks > self.cfg.max_total_tokens:
                return self._finish(rec, error_value(f"max_total_tokens {self.cfg.max_total_tokens} exceeded"))
            if self.total_tokens * self.cfg.cost_per_1k_tokens / 1000 > self.cfg.max_cost:
                return self._finish(rec, error_value(f"cost cap {self.cfg.max_cost} exceeded"))
            rec.prefixes.append(prefix)
            try:
                suffix = self.backend.complete(self.system, prefix)
            except RuntimeError as exc:  # BackendError: endpoint down, replay diverged, …
                return self._finish(rec, error_value(f"backend: {exc}"))
            self.total_tokens += ptoks + n_tokens(suffix)
            self.trace.append({"prefix_sha": sha(prefix), "suffix": suffix})
            self._turn_counter += 1
            turn = self._turn_counter
            rec.turns += 1
            tr = TurnRecord(turn, path, depth, n_tokens(prefix), suffix, "error")
            self.turns.append(tr)
            program = prefix + suffix
            effects = _TurnEffects(self, turn, path, depth, len(prefix))
            try:
                forms = read_all(program)
                wrapper_do(forms)
                ev = Evaluator(program, effects, {"stored": self._stored}, max_steps=self.cfg.max_steps)
                value = ev.run_forms(forms)
                if len(effects.turns) > 1:
                    raise SpellError("more than one turn producer (!call-now/!peek/!extend) in one trailing form")
                if effects.turns and value is not effects.turns[0]:
                    raise SpellError("a turn producer must be the whole trailing form")
            except Exception as exc:  # noqa: BLE001 - model text must never crash the harness
                known = isinstance(exc, (ReadError, SpellError))
                tr.effects, tr.message = effects.fired, str(exc) if known else f"{type(exc).__name__}: {exc}"
                self.errors += 1
                failures += 1
                if failures > self.cfg.max_parse_retries:
                    return self._finish(rec, error_value(f"gave up after {failures} failed programs: {exc}"))
                prefix = prefix + f"(think {pr_str('error in your last reply (discarded): ' + str(exc))})\n"
                continue
            failures = 0
            tr.effects = effects.fired
            if not isinstance(value, Turn):
                tr.outcome = "value"
                return self._finish(rec, value)
            edited, counts = apply_edits(program, lambda n, g=ev.globals.vars: g[n])
            tr.edits = sum(counts.values())
            self.edits += tr.edits
            nxt = reopen(edited)
            added = 0
            for name, v in value.bindings:
                text, n = self._splice(name, v)
                nxt += text
                added += n
            if value.kind == "peek":
                nxt += f"(prune {added + 1})\n"
            tr.outcome = "turn:" + value.kind
            prefix = nxt
        return self._finish(rec, error_value(f"max_turns {self.cfg.max_turns} exceeded"))

    def _finish(self, rec: RunRecord, value: Any) -> Any:
        rec.value = pr_str(value)
        return value

    def closed_prefix_effects(self) -> int:
        """Independent replay check: every prefix a model was shown, plus one new inert form, closed; effects fired.

        Once anything is appended, the old trailing form is inert data, so this must be 0 (spec §4).  (A prefix
        after ``!extend`` ends with its old trailing form: only a reply that appends *nothing* would re-fire it,
        which ``guard_stale`` refuses and the journal would count as a replay.)
        """
        fired = 0
        for rec in self.runs:
            for p in rec.prefixes[1:]:
                counter = _CountingEffects(self)
                try:
                    text = p + "nil" + CLOSE
                    Evaluator(text, counter, {"stored": self._stored}).run_forms(read_all(text))
                except (ReadError, SpellError, RecursionError):
                    pass
                fired += counter.fired
        return fired


class _CountingEffects(EffectContext):
    """Effect table whose effects only count (used to re-evaluate old prefixes without side effects)."""

    def __init__(self, h: Harness) -> None:
        self.names = list(h.tools.table()) + ["!llm-self", "!extend", "!print", "!describe", "leaf-llm"]
        self.fired = 0

    def table(self) -> dict[str, Any]:
        return {n: Effect(n, lambda *a: None) for n in self.names}

    def invoke(self, effect: Effect, args: list[Any], form: Any, origin: int) -> Any:
        self.fired += 1
        return Turn("extend") if effect.name.startswith("!") else None

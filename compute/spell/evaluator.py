"""Spell evaluator: special forms, pure builtins, dynamic scope and the effect boundary.

Spec §2 (evaluator).  Each evaluation gets a fresh environment.  Functions have *no closures*: a free
variable in a function body resolves in the caller's environment (dynamic scope).  Effects (turn producers
``!…``, ``leaf-llm``, the ``io/`` tools) are bound only inside ``(eval x)``: ``eval`` first evaluates ``x``
purely, then evaluates the resulting data in an environment extended with the effect table.  So in the
wrapper ``(quine completion (eval (do …pure… '(trailing))))`` only the quoted trailing form can fire effects.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compute.spell.reader import Keyword, Map, ReadError, SList, Symbol, Vector, pr_str, read, to_str

EFFECT_PREFIXES = ("!", "io/")
EFFECT_NAMES = {"leaf-llm"}


class SpellError(Exception):
    """A runtime error in a Spell program (returned to the model as data, never a harness crash)."""


class UnboundSymbol(SpellError):
    pass


@dataclass
class Turn:
    """What a turn-producing effect returns: the harness builds the next prefix from it."""

    kind: str  # "call" | "peek" | "extend"
    bindings: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class Fn:
    """A user function: parameters and body, no captured environment (dynamic scope)."""

    name: str
    params: list[str]
    rest: str | None
    body: list[Any]
    spell_repr = "fn"


@dataclass
class Effect:
    """An effect callable; the evaluator routes every call through ``EffectContext.invoke`` (journal)."""

    name: str
    fn: Callable[..., Any]
    spell_repr = "effect"


class EffectContext:
    """Interface the harness implements: the effect table and the journaled invocation."""

    def table(self) -> dict[str, Any]:
        return {}

    def invoke(self, effect: Effect, args: list[Any], form: Any, origin: int) -> Any:
        return effect.fn(*args)


class Env:
    __slots__ = ("vars", "parent")

    def __init__(self, vars: dict[str, Any] | None = None, parent: Env | None = None) -> None:
        self.vars = vars if vars is not None else {}
        self.parent = parent

    def find(self, name: str) -> Env | None:
        e: Env | None = self
        while e is not None:
            if name in e.vars:
                return e
            e = e.parent
        return None


def _is_effect_name(name: str) -> bool:
    return name.startswith(EFFECT_PREFIXES) or name in EFFECT_NAMES


def _truthy(x: Any) -> bool:
    return x is not None and x is not False


def _num(x: Any, fn: str) -> float | int:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise SpellError(f"{fn}: expected a number, got {pr_str(x)}")
    return x


def _div(*a: Any) -> Any:
    xs = [_num(x, "/") for x in a]
    if len(xs) == 1:
        xs = [1, *xs]
    out = xs[0]
    for x in xs[1:]:
        if x == 0:
            raise SpellError("/: division by zero")
        out = out // x if isinstance(out, int) and isinstance(x, int) and out % x == 0 else out / x
    return out


def _cmp(op: Callable[[Any, Any], bool], name: str) -> Callable[..., bool]:
    def f(*a: Any) -> bool:
        return all(op(_num(x, name), _num(y, name)) for x, y in zip(a, a[1:], strict=False))

    return f


def _eq(x: Any, y: Any) -> bool:
    if isinstance(x, bool) or isinstance(y, bool):
        return x is y
    return x == y


def _get(coll: Any, k: Any, default: Any = None) -> Any:
    if isinstance(coll, dict):
        return coll.get(k, default)
    if isinstance(coll, (list, str)) and isinstance(k, int) and not isinstance(k, bool):
        return coll[k] if 0 <= k < len(coll) else default
    return default


def _seq(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, str):
        return list(x)
    if isinstance(x, dict):
        return [Vector([k, v]) for k, v in x.items()]
    if isinstance(x, list):
        return list(x)
    raise SpellError(f"not a collection: {pr_str(x)}")


def _conj(coll: Any, *xs: Any) -> Any:
    if coll is None:
        coll = SList()
    if isinstance(coll, Vector):
        return Vector([*coll, *xs])
    if isinstance(coll, SList):
        return SList([*reversed(xs), *coll])
    if isinstance(coll, dict):
        m = Map(coll)
        for kv in xs:
            m[kv[0]] = kv[1]
        return m
    raise SpellError(f"conj: not a collection: {pr_str(coll)}")


def _subs(s: Any, start: int, end: int | None = None) -> str:
    if not isinstance(s, str):
        raise SpellError("subs: expected a string")
    end = len(s) if end is None else end
    if not (0 <= start <= end <= len(s)):
        raise SpellError(f"subs: index out of range ({start}, {end}) for length {len(s)}")
    return s[start:end]


def _re_find(pattern: str, s: str) -> Any:
    try:
        m = re.search(pattern, s)
    except re.error as exc:
        raise SpellError(f"strings/re-find: bad pattern: {exc}") from None
    if m is None:
        return None
    return m.group(0) if not m.groups() else Vector([m.group(0), *m.groups()])


def _read_string(s: str) -> Any:
    try:
        return read(s)
    except ReadError as exc:
        raise SpellError(f"read-string: {exc}") from None


def _index_of(coll: Any, x: Any) -> int:
    for i, v in enumerate(_seq(coll)):
        if v == x:
            return i
    return -1


PURE_BUILTINS: dict[str, Callable[..., Any]] = {
    "+": lambda *a: sum(_num(x, "+") for x in a),
    "-": lambda x, *a: -_num(x, "-") if not a else _num(x, "-") - sum(_num(y, "-") for y in a),
    "*": lambda *a: math.prod(_num(x, "*") for x in a),
    "/": _div,
    "mod": lambda a, b: _num(a, "mod") % _num(b, "mod") if b else _div(a, 0),
    "quot": lambda a, b: int(_num(a, "quot") / _num(b, "quot")) if b else _div(a, 0),
    "inc": lambda x: _num(x, "inc") + 1,
    "dec": lambda x: _num(x, "dec") - 1,
    "=": lambda *a: all(_eq(x, y) for x, y in zip(a, a[1:], strict=False)),
    "not=": lambda *a: not all(_eq(x, y) for x, y in zip(a, a[1:], strict=False)),
    "<": _cmp(lambda x, y: x < y, "<"),
    ">": _cmp(lambda x, y: x > y, ">"),
    "<=": _cmp(lambda x, y: x <= y, "<="),
    ">=": _cmp(lambda x, y: x >= y, ">="),
    "not": lambda x: not _truthy(x),
    "max": lambda *a: max(_num(x, "max") for x in a),
    "min": lambda *a: min(_num(x, "min") for x in a),
    "abs": lambda x: abs(_num(x, "abs")),
    "str": lambda *a: "".join(to_str(x) for x in a),
    "pr-str": lambda *a: " ".join(pr_str(x) for x in a),
    "read-string": _read_string,
    "count": lambda x: len(_seq(x)) if not isinstance(x, str) else len(x),
    "subs": _subs,
    "subvec": lambda v, s, e=None: Vector(_seq(v)[s : (len(v) if e is None else e)]),
    "first": lambda x: (_seq(x) or [None])[0],
    "second": lambda x: (_seq(x) + [None, None])[1],
    "last": lambda x: (_seq(x) or [None])[-1],
    "rest": lambda x: SList(_seq(x)[1:]),
    "nth": lambda x, i, d=None: _get(_seq(x), i, d),
    "conj": _conj,
    "cons": lambda x, c: SList([x, *_seq(c)]),
    "concat": lambda *cs: SList([v for c in cs for v in _seq(c)]),
    "get": _get,
    "assoc": lambda m, k, v: Map({**(m or {}), k: v}),
    "contains?": lambda m, k: k in m if isinstance(m, dict) else isinstance(k, int) and 0 <= k < len(_seq(m)),
    "keys": lambda m: SList(m.keys()),
    "vals": lambda m: SList(m.values()),
    "list": lambda *a: SList(a),
    "vector": lambda *a: Vector(a),
    "vec": lambda c: Vector(_seq(c)),
    "hash-map": lambda *a: Map(zip(a[::2], a[1::2], strict=False)),
    "range": lambda *a: SList(range(*a)),
    "empty?": lambda x: len(_seq(x)) == 0,
    "nil?": lambda x: x is None,
    "number?": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
    "string?": lambda x: isinstance(x, str),
    "index-of": _index_of,
    "int": lambda x: int(_num(x, "int")),
    "keyword": lambda s: Keyword(s),
    "symbol": lambda s: Symbol(s),
    "strings/join": lambda sep, c=None: (sep if c is not None else "").join(
        to_str(x) for x in (c if c is not None else sep)
    ),
    "strings/split": lambda s, sep: SList(s.split(sep)),
    "strings/includes?": lambda s, sub: sub in s,
    "strings/upper-case": lambda s: s.upper(),
    "strings/lower-case": lambda s: s.lower(),
    "strings/trim": lambda s: s.strip(),
    "strings/replace": lambda s, a, b: s.replace(a, b),
    "strings/re-find": _re_find,
    "math/sqrt": lambda x: math.sqrt(_num(x, "math/sqrt")),
    "math/pow": lambda x, y: _num(x, "math/pow") ** _num(y, "math/pow"),
    "math/floor": lambda x: math.floor(_num(x, "math/floor")),
    "math/ceil": lambda x: math.ceil(_num(x, "math/ceil")),
    "math/round": lambda x: round(_num(x, "math/round")),
}


class Evaluator:
    """Evaluates one program text.  ``effects`` supplies the effect table bound inside ``eval``.

    ``globals`` holds the final top-level bindings (``def``/``persist``) after ``run()``; the harness reads them
    to turn ``(persist name expr)`` into a literal at edit time.
    """

    def __init__(
        self,
        source: str,
        effects: EffectContext | None = None,
        extra: dict[str, Any] | None = None,
        max_steps: int = 200_000,
    ) -> None:
        self.source = source
        self.effects = effects
        self.max_steps = max_steps
        self.steps = 0
        self.globals = Env(dict(extra or {}))
        self._do_child: list[int] = []  # start offsets of the do-children being evaluated
        self.origin = -1  # start offset of the data currently evaluated by eval (effect provenance)

    # -- entry points ----------------------------------------------------------------------
    def run_forms(self, forms: list[Any]) -> Any:
        value = None
        try:
            for f in forms:
                value = self.ev(f, self.globals)
        except RecursionError:
            raise SpellError("recursion too deep") from None
        return value

    # -- core ------------------------------------------------------------------------------
    def ev(self, x: Any, env: Env) -> Any:
        self.steps += 1
        if self.steps > self.max_steps:
            raise SpellError(f"step budget of {self.max_steps} exhausted")
        if isinstance(x, Symbol):
            e = env.find(x.name)
            if e is None:
                if x.name in PURE_BUILTINS:
                    return PURE_BUILTINS[x.name]
                hint = " (effects are only bound inside eval)" if _is_effect_name(x.name) else ""
                raise UnboundSymbol(f"unbound symbol {x.name}{hint}")
            return e.vars[x.name]
        if isinstance(x, Vector):
            return Vector([self.ev(v, env) for v in x])
        if isinstance(x, Map):
            return Map({self.ev(k, env): self.ev(v, env) for k, v in x.items()})
        if not isinstance(x, SList):
            return x
        if not x:
            return SList()
        head = x[0]
        if isinstance(head, Symbol):
            special = _SPECIAL.get(head.name)
            if special is not None:
                return special(self, x, env)
            if head.name in ("!call-now", "!peek") and env.find("!extend") is not None:
                return self._call_now(x, env, peek=head.name == "!peek")
        f = self.ev(head, env)
        args = [self.ev(a, env) for a in x[1:]]
        return self.apply(f, args, env, x)

    def apply(self, f: Any, args: list[Any], env: Env, form: Any = None) -> Any:
        if isinstance(f, Fn):
            frame: dict[str, Any] = {}
            if len(args) < len(f.params) or (f.rest is None and len(args) > len(f.params)):
                raise SpellError(f"{f.name}: wrong number of arguments ({len(args)})")
            frame.update(zip(f.params, args, strict=False))
            if f.rest is not None:
                frame[f.rest] = SList(args[len(f.params) :])
            local = Env(frame, env)  # dynamic scope: the parent is the *caller's* environment
            out = None
            for b in f.body:
                out = self.ev(b, local)
            return out
        if isinstance(f, Effect):
            if self.effects is None:
                raise SpellError(f"effect {f.name} called without an effect table")
            return self.effects.invoke(f, args, form, self.origin)
        if isinstance(f, _HigherOrder):
            return f.fn(self, env, *args)
        if callable(f) and not isinstance(f, (Symbol, Keyword)):
            try:
                return f(*args)
            except SpellError:
                raise
            except (TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError) as exc:
                name = pr_str(form[0]) if isinstance(form, SList) and form else "builtin"
                raise SpellError(f"{name}: {exc}") from None
        if isinstance(f, Keyword) and args:
            return _get(args[0], f, args[1] if len(args) > 1 else None)
        raise SpellError(f"not a function: {pr_str(f)}")

    # -- effects: !call-now / !peek are special (names are not evaluated) -------------------
    def _call_now(self, x: SList, env: Env, peek: bool) -> Turn:
        pairs = x[1:]
        if not pairs or len(pairs) % 2:
            raise SpellError(f"{x[0].name} needs name/expression pairs")
        bindings = []
        for name, expr in zip(pairs[::2], pairs[1::2], strict=False):
            if not isinstance(name, Symbol):
                raise SpellError(f"{x[0].name}: binding name must be a symbol, got {pr_str(name)}")
            bindings.append((name.name, self.ev(expr, env)))
        marker = Effect(x[0].name, lambda t: t)
        return self.effects.invoke(marker, [Turn("peek" if peek else "call", bindings)], x, self.origin)


class _HigherOrder:
    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn


def _make_fn(ev: Evaluator, name: str, params: Any, body: list[Any]) -> Fn:
    if not isinstance(params, Vector) or not all(isinstance(p, Symbol) for p in params):
        raise SpellError(f"{name}: parameters must be a vector of symbols")
    names = [p.name for p in params]
    rest = None
    if "&" in names:
        i = names.index("&")
        if i != len(names) - 2:
            raise SpellError(f"{name}: & must precede exactly one rest parameter")
        rest, names = names[i + 1], names[:i]
    return Fn(name, names, rest, list(body))


def _sf_quote(ev: Evaluator, x: SList, env: Env) -> Any:
    if len(x) != 2:
        raise SpellError("quote takes one form")
    return x[1]


def _sf_quine(ev: Evaluator, x: SList, env: Env) -> Any:
    """(quine name expr): bind the exact source text of the whole form to name, then evaluate expr."""
    if len(x) != 3 or not isinstance(x[1], Symbol):
        raise SpellError("quine needs a name and one expression")
    text = ev.source[x.span[0] : x.span[1]] if x.span else pr_str(x)
    ev.globals.vars[x[1].name] = text
    return ev.ev(x[2], env)


def _sf_def(ev: Evaluator, x: SList, env: Env) -> Any:
    if len(x) != 3 or not isinstance(x[1], Symbol):
        raise SpellError(f"{x[0].name} needs a name and one expression")
    ev.globals.vars[x[1].name] = ev.ev(x[2], env)
    return None


def _sf_defn(ev: Evaluator, x: SList, env: Env) -> Any:
    if len(x) < 3 or not isinstance(x[1], Symbol):
        raise SpellError("defn needs a name, a parameter vector and a body")
    body = list(x[3:])
    params = x[2]
    if isinstance(params, str) and body:  # docstring
        params, body = body[0], body[1:]
    ev.globals.vars[x[1].name] = _make_fn(ev, x[1].name, params, body)
    return None


def _sf_fn(ev: Evaluator, x: SList, env: Env) -> Any:
    if len(x) < 2:
        raise SpellError("fn needs a parameter vector")
    return _make_fn(ev, "fn", x[1], list(x[2:]))


def _sf_let(ev: Evaluator, x: SList, env: Env) -> Any:
    if len(x) < 2 or not isinstance(x[1], Vector) or len(x[1]) % 2:
        raise SpellError("let needs a binding vector of name/value pairs")
    local = Env({}, env)
    for name, expr in zip(x[1][::2], x[1][1::2], strict=False):
        if not isinstance(name, Symbol):
            raise SpellError("let: binding names must be symbols")
        local.vars[name.name] = ev.ev(expr, local)
    out = None
    for b in x[2:]:
        out = ev.ev(b, local)
    return out


def _sf_if(ev: Evaluator, x: SList, env: Env) -> Any:
    if len(x) not in (3, 4):
        raise SpellError("if needs a test, a then branch and an optional else branch")
    if _truthy(ev.ev(x[1], env)):
        return ev.ev(x[2], env)
    return ev.ev(x[3], env) if len(x) == 4 else None


def _sf_when(ev: Evaluator, x: SList, env: Env) -> Any:
    if len(x) < 2:
        raise SpellError("when needs a test")
    out = None
    if _truthy(ev.ev(x[1], env)):
        for b in x[2:]:
            out = ev.ev(b, env)
    return out


def _sf_cond(ev: Evaluator, x: SList, env: Env) -> Any:
    if len(x) % 2 == 0:
        raise SpellError("cond needs test/expression pairs")
    for t, e in zip(x[1::2], x[2::2], strict=False):
        if (isinstance(t, Keyword) and t.name == "else") or _truthy(ev.ev(t, env)):
            return ev.ev(e, env)
    return None


def _sf_and(ev: Evaluator, x: SList, env: Env) -> Any:
    out: Any = True
    for b in x[1:]:
        out = ev.ev(b, env)
        if not _truthy(out):
            return out
    return out


def _sf_or(ev: Evaluator, x: SList, env: Env) -> Any:
    out: Any = None
    for b in x[1:]:
        out = ev.ev(b, env)
        if _truthy(out):
            return out
    return out


def _sf_do(ev: Evaluator, x: SList, env: Env) -> Any:
    out = None
    for b in x[1:]:
        ev._do_child.append(_start(b))
        try:
            out = ev.ev(b, env)
        finally:
            ev._do_child.pop()
    return out


def _start(x: Any) -> int:
    span = getattr(x, "span", None)
    return span[0] if span else -1


def _sf_nil(ev: Evaluator, x: SList, env: Env) -> Any:
    """think / prune / rethink: no-ops at run time (prune/rethink act at edit time)."""
    return None


def _sf_eval(ev: Evaluator, x: SList, env: Env) -> Any:
    """(eval x): evaluate x purely, then evaluate the resulting data with the effect table bound."""
    if len(x) != 2:
        raise SpellError("eval takes one form")
    data = ev.ev(x[1], env)
    table = ev.effects.table() if ev.effects is not None else {}
    origin = _start(data)
    if origin < 0:  # data built at run time: attribute it to the do-child (or eval form) that produced it
        origin = ev._do_child[-1] if ev._do_child and ev._do_child[-1] >= 0 else _start(x)
    saved, ev.origin = ev.origin, origin
    try:
        return ev.ev(data, Env(table, env))
    finally:
        ev.origin = saved


_SPECIAL: dict[str, Callable[[Evaluator, SList, Env], Any]] = {
    "quote": _sf_quote,
    "quine": _sf_quine,
    "def": _sf_def,
    "persist": _sf_def,
    "defn": _sf_defn,
    "fn": _sf_fn,
    "let": _sf_let,
    "if": _sf_if,
    "when": _sf_when,
    "cond": _sf_cond,
    "and": _sf_and,
    "or": _sf_or,
    "do": _sf_do,
    "think": _sf_nil,
    "prune": _sf_nil,
    "rethink": _sf_nil,
    "eval": _sf_eval,
}


def _ho_map(ev: Evaluator, env: Env, f: Any, *colls: Any) -> SList:
    seqs = [_seq(c) for c in colls]
    return SList(ev.apply(f, list(args), env) for args in zip(*seqs, strict=False))


def _ho_filter(ev: Evaluator, env: Env, f: Any, coll: Any) -> SList:
    return SList(v for v in _seq(coll) if _truthy(ev.apply(f, [v], env)))


def _ho_reduce(ev: Evaluator, env: Env, f: Any, *a: Any) -> Any:
    if len(a) == 1:
        items = _seq(a[0])
        if not items:
            return ev.apply(f, [], env)
        acc, items = items[0], items[1:]
    else:
        acc, items = a[0], _seq(a[1])
    for v in items:
        acc = ev.apply(f, [acc, v], env)
    return acc


def _ho_apply(ev: Evaluator, env: Env, f: Any, *a: Any) -> Any:
    if not a:
        return ev.apply(f, [], env)
    return ev.apply(f, [*a[:-1], *_seq(a[-1])], env)


def _edit_reopen(ev: Evaluator, env: Env, form: Any) -> Any:
    from compute.spell.edits import edit_data

    return edit_data(form, lambda name: (env.find(name) or ev.globals).vars.get(name))


PURE_BUILTINS.update(
    {
        "map": _HigherOrder(_ho_map),
        "filter": _HigherOrder(_ho_filter),
        "reduce": _HigherOrder(_ho_reduce),
        "apply": _HigherOrder(_ho_apply),
        "edit-reopen": _HigherOrder(_edit_reopen),
    }
)


def evaluate(source: str, effects: EffectContext | None = None, extra: dict[str, Any] | None = None) -> Any:
    """Read and evaluate every form of ``source`` in a fresh environment; return the last value."""
    from compute.spell.reader import read_all

    ev = Evaluator(source, effects, extra)
    return ev.run_forms(read_all(source))

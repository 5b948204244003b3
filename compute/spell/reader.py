"""Spell reader and printer: a small Clojure-flavoured s-expression syntax with exact source spans.

Spec §2 (reader): lists ``()``, vectors ``[]``, maps ``{}``, strings with escapes, integers, floats, symbols,
``:keywords``, ``'x`` → ``(quote x)``, ``;`` comments.  Containers and symbols keep ``span = (start, end)`` so
``quine`` can bind the *exact* source text (never a reprint).  ``pr_str`` prints canonically and
``read(pr_str(x)) == x`` for every printable value.
"""

from __future__ import annotations

import re
from typing import Any

Span = tuple[int, int]


class ReadError(ValueError):
    """Malformed source (unbalanced delimiter, unterminated string, …); ``pos`` is the character offset."""

    def __init__(self, message: str, pos: int) -> None:
        self.pos = pos
        super().__init__(f"{message} at offset {pos}")


class Symbol:
    __slots__ = ("name", "span")

    def __init__(self, name: str, span: Span | None = None) -> None:
        self.name = name
        self.span = span

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Symbol) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("sym", self.name))

    def __repr__(self) -> str:
        return self.name


class Keyword:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Keyword) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("kw", self.name))

    def __repr__(self) -> str:
        return ":" + self.name


class SList(list):
    """A Spell list ``( … )``; equal only to another SList with equal items."""

    span: Span | None = None
    child_spans: list[Span] | None = None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and list.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]


class Vector(SList):
    """A Spell vector ``[ … ]``."""


class Map(dict):
    """A Spell map ``{ … }`` (insertion-ordered)."""

    span: Span | None = None


def sym(name: str) -> Symbol:
    return Symbol(name)


def slist(*items: Any) -> SList:
    return SList(items)


_DELIMS = set("()[]{}\";'")
_INT_RE = re.compile(r"^[+-]?\d+$")
_FLOAT_RE = re.compile(r"^[+-]?(\d+\.\d*([eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+([eE][+-]?\d+)?)$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "0": "\0"}
_CLOSE = {"(": ")", "[": "]", "{": "}"}


class _Reader:
    def __init__(self, src: str, record: list[tuple[Any, int, int]] | None = None) -> None:
        self.src = src
        self.i = 0
        self.record = record

    def skip(self) -> None:
        s, n = self.src, len(self.src)
        while self.i < n:
            c = s[self.i]
            if c.isspace() or c == ",":
                self.i += 1
            elif c == ";":
                while self.i < n and s[self.i] != "\n":
                    self.i += 1
            else:
                return

    def form(self) -> Any:
        self.skip()
        if self.i >= len(self.src):
            raise ReadError("unexpected end of input", self.i)
        start = self.i
        c = self.src[start]
        if c in _CLOSE:
            value = self._coll(c)
        elif c in ")]}":
            raise ReadError(f"unexpected {c!r}", start)
        elif c == '"':
            value = self._string()
        elif c == "'":
            self.i += 1
            inner = self.form()
            value = SList([Symbol("quote", (start, start + 1)), inner])
            value.span = (start, self.i)
            value.child_spans = [(start, start + 1), (start + 1, self.i)]
        else:
            value = self._atom()
        if self.record is not None:
            self.record.append((value, start, self.i))
        return value

    def _coll(self, opener: str) -> Any:
        start = self.i
        closer = _CLOSE[opener]
        self.i += 1
        items: list[Any] = []
        spans: list[Span] = []
        while True:
            self.skip()
            if self.i >= len(self.src):
                raise ReadError(f"unbalanced {opener!r} opened at offset {start}", self.i)
            if self.src[self.i] == closer:
                self.i += 1
                break
            if self.src[self.i] in ")]}":
                raise ReadError(f"mismatched {self.src[self.i]!r} for {opener!r} opened at offset {start}", self.i)
            s0 = self.i
            items.append(self.form())
            spans.append((s0, self.i))
        if opener == "{":
            if len(items) % 2:
                raise ReadError("map literal needs an even number of forms", start)
            m = Map()
            for k, v in zip(items[::2], items[1::2], strict=False):
                try:
                    m[k] = v
                except TypeError:
                    raise ReadError("map key must be an atom", start) from None
            m.span = (start, self.i)
            return m
        out = SList(items) if opener == "(" else Vector(items)
        out.span = (start, self.i)
        out.child_spans = spans
        return out

    def _string(self) -> str:
        start = self.i
        self.i += 1
        buf: list[str] = []
        s, n = self.src, len(self.src)
        while True:
            if self.i >= n:
                raise ReadError(f"unterminated string opened at offset {start}", self.i)
            c = s[self.i]
            if c == '"':
                self.i += 1
                return "".join(buf)
            if c == "\\":
                if self.i + 1 >= n:
                    raise ReadError("unterminated escape", self.i)
                e = s[self.i + 1]
                if e not in _ESCAPES:
                    raise ReadError(f"unknown escape \\{e}", self.i)
                buf.append(_ESCAPES[e])
                self.i += 2
            else:
                buf.append(c)
                self.i += 1

    def _atom(self) -> Any:
        start = self.i
        s, n = self.src, len(self.src)
        while self.i < n and not (s[self.i].isspace() or s[self.i] in _DELIMS or s[self.i] in "()[]{},"):
            self.i += 1
        tok = s[start : self.i]
        if _INT_RE.match(tok):
            return int(tok)
        if _FLOAT_RE.match(tok):
            return float(tok)
        if tok == "nil":
            return None
        if tok == "true":
            return True
        if tok == "false":
            return False
        if tok.startswith(":"):
            if len(tok) == 1:
                raise ReadError("empty keyword", start)
            return Keyword(tok[1:])
        return Symbol(tok, (start, self.i))


def read_all(src: str) -> list[Any]:
    """Every top-level form of ``src``; raises ReadError on malformed input."""
    r = _Reader(src)
    out = []
    while True:
        r.skip()
        if r.i >= len(src):
            return out
        out.append(r.form())


def read(src: str) -> Any:
    """Exactly one form (trailing whitespace/comments allowed)."""
    r = _Reader(src)
    value = r.form()
    r.skip()
    if r.i != len(src):
        raise ReadError("more than one form", r.i)
    return value


def read_nodes(src: str) -> list[tuple[Any, int, int]]:
    """Every node (atoms included) with its (start, end) span, innermost first."""
    rec: list[tuple[Any, int, int]] = []
    r = _Reader(src, rec)
    while True:
        r.skip()
        if r.i >= len(src):
            return rec
        r.form()


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def pr_str(x: Any) -> str:
    """Canonical, readable printing (strings quoted and escaped)."""
    if x is None:
        return "nil"
    if x is True:
        return "true"
    if x is False:
        return "false"
    if isinstance(x, str):
        return '"' + _escape(x).replace("\0", "\\0") + '"'
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        r = repr(x)
        if r in ("inf", "-inf", "nan"):
            return {"inf": "##Inf", "-inf": "##-Inf", "nan": "##NaN"}[r]
        return r if ("." in r or "e" in r) else r + ".0"
    if isinstance(x, (Symbol, Keyword)):
        return repr(x)
    if isinstance(x, Vector):
        return "[" + " ".join(pr_str(v) for v in x) + "]"
    if isinstance(x, (SList, list, tuple)):
        return "(" + " ".join(pr_str(v) for v in x) + ")"
    if isinstance(x, dict):
        return "{" + " ".join(pr_str(k) + " " + pr_str(v) for k, v in x.items()) + "}"
    return f"#<{getattr(x, 'spell_repr', type(x).__name__)}>"


def to_str(x: Any) -> str:
    """Clojure ``str`` of one value: strings raw, nil empty, everything else printed."""
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    return pr_str(x)


def _needs_quote(x: Any) -> bool:
    if isinstance(x, Symbol) or (isinstance(x, SList) and not isinstance(x, Vector)):
        return True
    if isinstance(x, list):
        return any(_needs_quote(v) for v in x)
    if isinstance(x, dict):
        return any(_needs_quote(k) or _needs_quote(v) for k, v in x.items())
    return False


def literal(x: Any) -> str:
    """Source text that *evaluates* to x: printed through pr_str, quoted when it holds lists or symbols."""
    text = pr_str(x)
    return "'" + text if _needs_quote(x) else text

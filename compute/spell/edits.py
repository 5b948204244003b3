"""Edit markers and ``reopen`` (spec §2, "Edit markers" and "Turn semantics").

Applied when the next prefix is built, on the *source text* (spans), so whitespace and comments survive:

* ``(prune k)``          removes the k previous siblings and itself (k = 1 by default);
* ``(rethink "…" [k])``  prunes like ``prune`` and leaves one ``(think "…")`` in its place;
* ``(persist name expr)`` keeps the form but replaces ``expr`` by the literal of ``name``'s value this turn.

Edits act on the children of the wrapper forms (top level, ``quine``, ``eval``, ``do``); quoted data (old
trailing expressions) and function bodies are never edited.  ``edit_data`` is the same on data
(the ``edit-reopen`` builtin).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compute.spell.evaluator import SpellError
from compute.spell.reader import SList, Symbol, Vector, literal, pr_str, read_all

_WRAPPERS = {"do", "quine", "eval"}
Lookup = Callable[[str], Any]


def _head(x: Any) -> str | None:
    return x[0].name if isinstance(x, SList) and not isinstance(x, Vector) and x and isinstance(x[0], Symbol) else None


def _marker(x: Any) -> tuple[str, int, str] | None:
    """('prune'|'rethink', k, text) for an edit marker, else None."""
    h = _head(x)
    if h == "prune":
        k = x[1] if len(x) > 1 and isinstance(x[1], int) and not isinstance(x[1], bool) else 1
        return ("prune", max(0, k), "")
    if h == "rethink":
        text = x[1] if len(x) > 1 and isinstance(x[1], str) else ""
        k = x[2] if len(x) > 2 and isinstance(x[2], int) and not isinstance(x[2], bool) else 1
        return ("rethink", max(0, k), text)
    return None


def _plan(children: list[Any], first: int) -> tuple[set[int], dict[int, str]]:
    """Indices removed and rethink replacements (index → think text) for one sibling list."""
    removed: set[int] = set()
    thinks: dict[int, str] = {}
    for i in range(first, len(children)):
        m = _marker(children[i])
        if m is None:
            continue
        kind, k, text = m
        prev = [j for j in range(i - 1, first - 1, -1) if j not in removed][:k]
        removed.update(prev)
        for j in prev:
            thinks.pop(j, None)
        if kind == "rethink":
            thinks[i] = text
        else:
            removed.add(i)
    return removed, thinks


def _literal(lookup: Lookup, name: str) -> str | None:
    try:
        value = lookup(name)
    except Exception:  # noqa: BLE001 - a failing lookup just leaves the form as written
        return None
    text = literal(value)
    return None if "#<" in text else text


def _collect(node: Any, lookup: Lookup, repl: list[tuple[int, int, str]], counts: dict[str, int], src: str) -> None:
    spans = getattr(node, "child_spans", None)
    if spans is None:
        return
    first = 1
    removed, thinks = _plan(list(node), first)
    for i in range(first, len(node)):
        ch, (s, e) = node[i], spans[i]
        if i in removed:  # delete the form and the whitespace before it (comments stay)
            lo = s
            while lo > spans[i - 1][1] and src[lo - 1] in " \t\r\n,":
                lo -= 1
            repl.append((lo, e, ""))
            counts["prune"] += 1
        elif i in thinks:
            repl.append((s, e, "(think " + pr_str(thinks[i]) + ")"))
            counts["rethink"] += 1
        elif _head(ch) == "persist" and len(ch) == 3 and isinstance(ch[1], Symbol):
            lit = _literal(lookup, ch[1].name)
            if lit is not None and ch.child_spans is not None:
                ps, pe = ch.child_spans[2]
                repl.append((ps, pe, lit))
                counts["persist"] += 1
        elif _head(ch) in _WRAPPERS:
            _collect(ch, lookup, repl, counts, src)


def apply_edits(src: str, lookup: Lookup) -> tuple[str, dict[str, int]]:
    """Apply prune/rethink/persist markers to program text; return (edited text, counts per marker kind)."""
    forms = read_all(src)
    repl: list[tuple[int, int, str]] = []
    counts = {"prune": 0, "rethink": 0, "persist": 0}
    for f in forms:
        if _head(f) in _WRAPPERS:
            _collect(f, lookup, repl, counts, src)
    out = src
    for s, e, text in sorted(repl, key=lambda r: r[0], reverse=True):
        out = out[:s] + text + out[e:]
    return out, counts


def wrapper_do(forms: list[Any]) -> SList:
    """The ``do`` of the last ``(quine name (eval (do …)))`` form; SpellError if the program has none."""
    for f in reversed(forms):
        if _head(f) == "quine" and len(f) == 3 and _head(f[2]) == "eval" and len(f[2]) == 2:
            if _head(f[2][1]) == "do":
                return f[2][1]
    raise SpellError("the program is not a (quine name (eval (do …))) wrapper")


def reopen(src: str) -> str:
    """Strip the wrapper's closing delimiters so the next suffix continues inside ``do``."""
    do = wrapper_do(read_all(src))
    return src[: do.span[1] - 1].rstrip() + "\n"


def edit_data(form: Any, lookup: Lookup) -> Any:
    """``edit-reopen`` on data: the markers applied structurally.

    README example: (do (+ 1 2) (prune) (+ 2 2)) → (do (+ 2 2)).
    """
    if not isinstance(form, SList) or isinstance(form, Vector) or not form:
        return form
    removed, thinks = _plan(list(form), 1)
    out = SList([form[0]])
    for i in range(1, len(form)):
        ch = form[i]
        if i in removed:
            continue
        if i in thinks:
            out.append(SList([Symbol("think"), thinks[i]]))
        elif _head(ch) == "persist" and len(ch) == 3 and isinstance(ch[1], Symbol):
            value = lookup(ch[1].name)
            out.append(SList([ch[0], ch[1], value if value is not None else ch[2]]))
        elif _head(ch) in _WRAPPERS:
            out.append(edit_data(ch, lookup))
        else:
            out.append(ch)
    if not isinstance(out, SList):
        raise SpellError("edit-reopen: internal error")
    return out

"""Reader/printer: exact spans, canonical round trip, escaping through splices, clear errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.spell.evaluator import evaluate
from compute.spell.reader import (
    Keyword,
    Map,
    ReadError,
    SList,
    Symbol,
    Vector,
    literal,
    pr_str,
    read,
    read_all,
    read_nodes,
)

SRC = """(quine completion (eval (do ; a comment
  (def s "a \\"quoted\\" \\\\ back\\nslash")  [1 -2.5 :kw {:a nil}]
  '(!call-now x (io/read "f.txt")))))"""


def test_every_node_span_is_its_source_text() -> None:
    nodes = read_nodes(SRC)
    assert len(nodes) > 20
    for value, s, e in nodes:
        text = SRC[s:e]
        assert read(text) == value or pr_str(read(text)) == pr_str(value)
        if isinstance(value, (SList, Map)):
            assert value.span == (s, e)


def test_quine_binds_exact_text_with_comments_and_whitespace() -> None:
    src = "(quine me   ; keep this comment\n  (str me))"
    assert evaluate(src) == src


def test_atoms_and_quote() -> None:
    assert read("'x") == SList([Symbol("quote"), Symbol("x")])
    assert read('[1 2.0 nil true false :k "s"]') == Vector([1, 2.0, None, True, False, Keyword("k"), "s"])
    assert read("{:a 1}") == Map({Keyword("a"): 1})
    assert read_all("1 ; c\n 2") == [1, 2]


@pytest.mark.parametrize(
    ("src", "fragment"),
    [
        ("(+ 1 2", "unbalanced"),
        ('"abc', "unterminated string"),
        ("(a]", "mismatched"),
        (")", "unexpected"),
        ("{:a}", "even number"),
        ('"\\q"', "unknown escape"),
    ],
)
def test_malformed_input_gives_a_clear_error(src: str, fragment: str) -> None:
    with pytest.raises(ReadError) as exc:
        read_all(src)
    assert fragment in str(exc.value) and "offset" in str(exc.value)


atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["a", "x-y", "!llm-self", "io/read", "ok?", "*", "f2"]).map(Symbol),
    st.sampled_from(["k", "error", "a-b"]).map(Keyword),
)
values = st.recursive(
    atoms,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4).map(SList),
        st.lists(kids, max_size=4).map(Vector),
        st.dictionaries(st.one_of(st.integers(0, 50), st.text(max_size=5)), kids, max_size=3).map(Map),
    ),
    max_leaves=12,
)


@settings(max_examples=120, deadline=None)
@given(values)
def test_read_pr_str_round_trip(x: object) -> None:
    back = read(pr_str(x))
    assert pr_str(back) == pr_str(x)
    assert back == x


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40))
def test_strings_survive_splicing_through_the_printer(s: str) -> None:
    # a tool result spliced as (def x <literal>) evaluates back to the same string
    assert evaluate(f"(def x {literal(s)}) x") == s


def test_list_literals_are_quoted_when_spliced() -> None:
    v = SList(["a", SList([1, Symbol("b")])])
    assert literal(v).startswith("'")
    assert evaluate(f"(def x {literal(v)}) x") == v

"""Evaluator: README known answers, a small Lisp suite, dynamic scope, the effect boundary, edit markers."""

from __future__ import annotations

import pytest

from compute.spell.edits import apply_edits, reopen
from compute.spell.evaluator import Effect, EffectContext, SpellError, UnboundSymbol, evaluate
from compute.spell.reader import Keyword, SList, Symbol, Vector, read


def test_quine_readme_example() -> None:
    out = evaluate("(quine name (pr-str name))")
    assert out == '"(quine name (pr-str name))"'  # pr-str of the form's own source text
    assert read(out) == "(quine name (pr-str name))"


LISP_SUITE = [
    ("(+ 1 2 3)", 6),
    ("(- 10 4 1)", 5),
    ("(- 3)", -3),
    ("(* 2 3 4)", 24),
    ("(/ 12 4)", 3),
    ("(/ 1 4)", 0.25),
    ("(mod 7 3)", 1),
    ("(< 1 2 3)", True),
    ("(= 1 1 1)", True),
    ("(= 1 true)", False),
    ("(if nil 1 2)", 2),
    ("(if 0 1 2)", 1),  # 0 is truthy in Clojure
    ("(let [x 2 y (* x 3)] (+ x y))", 8),
    ("(do (def a 5) (defn sq [x] (* x x)) (sq a))", 25),
    ("(defn fact [n] (if (<= n 1) 1 (* n (fact (dec n))))) (fact 10)", 3628800),
    ("((fn [a & more] (count more)) 1 2 3)", 2),
    ('(str "a" 1 nil :k)', "a1:k"),
    ("(count [1 2 3])", 3),
    ('(subs "hello" 1 3)', "el"),
    ("(first '(9 8))", 9),
    ("(rest [1 2 3])", SList([2, 3])),
    ("(conj [1 2] 3)", Vector([1, 2, 3])),
    ("(conj '(1 2) 0)", SList([0, 1, 2])),
    ("(get {:a 1} :a)", 1),
    ("(:a {:a 7})", 7),
    ("(map inc [1 2 3])", SList([2, 3, 4])),
    ("(filter (fn [x] (> x 1)) [1 2 3])", SList([2, 3])),
    ("(reduce + 0 [1 2 3 4])", 10),
    ("(apply max [3 9 2])", 9),
    ('(read-string "(a b)")', SList([Symbol("a"), Symbol("b")])),
    ("(cond false 1 (= 1 2) 2 :else 3)", 3),
    ("(and 1 nil 2)", None),
    ("(or nil false 4)", 4),
    ('(strings/join "," [1 2])', "1,2"),
    ('(strings/re-find "code (\\\\d+)" "the code 42")', Vector(["code 42", "42"])),
    ("(math/sqrt 16)", 4.0),
    ('(think "anything")', None),
    ("(subvec [1 2 3 4] 1 3)", Vector([2, 3])),
    ("(index-of [5 6 7] 7)", 2),
]


@pytest.mark.parametrize(("src", "expected"), LISP_SUITE)
def test_lisp_suite(src: str, expected: object) -> None:
    out = evaluate(src)
    assert out == expected and type(out) is type(expected)


def test_dynamic_scope() -> None:
    assert evaluate("(defn f [] y) (let [y 5] (f))") == 5
    with pytest.raises(UnboundSymbol):
        evaluate("(defn g [] z) (let [y 5] (g))")


def test_fresh_environment_per_evaluation() -> None:
    evaluate("(def leak 1)")
    with pytest.raises(UnboundSymbol):
        evaluate("leak")


class Counting(EffectContext):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def table(self) -> dict:
        return {
            "!llm-self": Effect("!llm-self", lambda p: f"child saw {p}"),
            "io/flip": Effect("io/flip", lambda: "heads"),
        }

    def invoke(self, effect: Effect, args: list, form: object, origin: int) -> object:
        self.calls.append(effect.name)
        return effect.fn(*args)


def test_effects_are_unbound_outside_eval() -> None:
    fx = Counting()
    with pytest.raises(UnboundSymbol, match="only bound inside eval"):
        evaluate('(quine completion (eval (do (!llm-self "No"))))', fx)
    assert fx.calls == []


def test_quoted_trailing_effect_runs_exactly_once() -> None:
    fx = Counting()
    out = evaluate('(quine completion (eval (do (def a 1) \'(!llm-self "Yes"))))', fx)
    assert out == "child saw Yes" and fx.calls == ["!llm-self"]


def test_edit_reopen_readme_prune() -> None:
    assert evaluate("(edit-reopen '(do (+ 1 2) (prune) (+ 2 2)))") == read("(do (+ 2 2))")
    assert evaluate("(eval (edit-reopen '(do (+ 1 2) (prune) (+ 2 2))))") == 4
    assert evaluate("(edit-reopen '(do 1 2 3 (prune 2) 4))") == read("(do 1 4)")


WRAP = "(quine completion (eval (do\n  {}\n  '(!extend))))"


def test_prune_two_removes_two_siblings_in_text() -> None:
    src = WRAP.format("(def a 1) ; keep\n  (def b 2) (def c 3) (prune 2)")
    edited, counts = apply_edits(src, lambda n: None)
    assert "(def a 1) ; keep" in edited and "(def b" not in edited and "(def c" not in edited
    assert "prune" not in edited and counts["prune"] == 3


def test_rethink_leaves_exactly_one_think() -> None:
    src = WRAP.format('(def a 1) (think "old") (def b 2) (rethink "better plan" 2)')
    edited, _ = apply_edits(src, lambda n: None)
    assert edited.count("(think ") == 1 and '(think "better plan")' in edited and "(def a 1)" in edited
    assert "(def b" not in edited and '"old"' not in edited


def test_persist_re_emits_the_value_literal() -> None:
    src = WRAP.format("(persist x (+ 1 2))")
    edited, counts = apply_edits(src, lambda n: {"x": 3}[n])
    assert "(persist x 3)" in edited and counts["persist"] == 1
    assert evaluate("(persist x (+ 1 2)) x") == 3  # def at run time


def test_quoted_data_is_never_edited() -> None:
    src = WRAP.format("'(do 1 (prune) 2)")
    assert apply_edits(src, lambda n: None)[0] == src


def test_reopen_strips_the_wrapper_closers() -> None:
    src = WRAP.format("(def a 1)")
    opened = reopen(src)
    assert opened.endswith("'(!extend)\n") and opened.count("(") - opened.count(")") == 3


@pytest.mark.parametrize(
    "src", ["(undefined-fn 1)", "(1 2)", '(subs "ab" 5)', "(/ 1 0)", "(let [x] x)", "(defn f [] (f)) (f)"]
)
def test_runtime_errors_are_spell_errors(src: str) -> None:
    with pytest.raises(SpellError):
        evaluate(src)


def test_keywords_and_maps_evaluate() -> None:
    assert evaluate("{:a (+ 1 1)}") == {Keyword("a"): 2}

"""Task suite (spec §2 "Tasks"): orchestration games 1–5 and the needle search, with scripted models and checkers.

Every checker scores from the harness's trace (runs, prefixes, journal), never from the model's claims.
The scripted models write real Spell: the control flow (recursion, forks, bisection feedback, persistence)
runs in the interpreter; the scripted "model" only chooses what text to append.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compute.spell.backends import ScriptedBackend
from compute.spell.harness import Backend, Harness, HarnessConfig, ToolBox, is_error
from compute.spell.reader import Keyword, pr_str, read

GAMES = ["hello", "coin_flip", "auction", "twenty_questions", "telephone"]
_START = r"\A;; {}.*\(do\n\Z"


@dataclass
class TaskResult:
    task: str
    value: Any
    checks: dict[str, bool] = field(default_factory=dict)
    harness: Harness | None = None

    @property
    def success(self) -> bool:
        return bool(self.checks) and all(self.checks.values())


def _child_values(h: Harness) -> list[Any]:
    return [read(r.value) for r in h.runs if r.parent == "root"]


# -- 1. hello world via a child call -------------------------------------------------------------
def hello(seed: int, cfg: HarnessConfig, backend: Backend | None = None) -> TaskResult:
    rules = [
        (_START.format("hello-world"), '  (think "delegate to a child")\n  \'(!llm-self "greet: say hello, world"))))'),
        (_START.format("greet:"), '  \'(str "hello, " "world"))))'),
    ]
    h = Harness(backend or ScriptedBackend(rules), ToolBox(seed=seed), cfg)
    v = h.run("hello-world: ask a child to greet")
    children = _child_values(h)
    checks = {"value is 'hello, world'": v == "hello, world", "one child returned it": children == ["hello, world"]}
    return TaskResult("hello", v, checks, h)


# -- 2. coin-flip recursion with a stop rule ------------------------------------------------------
def coin_flip(seed: int, cfg: HarnessConfig, backend: Backend | None = None) -> TaskResult:
    def decide(m: re.Match[str], prefix: str) -> str:
        d = int(m.group(1))
        nxt = pr_str(f"coin-flip depth={d + 1}")
        return f'  \'(if (= c "heads") {d} (!llm-self {nxt})))))'

    rules = [
        (r"\A;; coin-flip depth=(\d+).*\(def c \"(?:heads|tails)\"\)\n\Z", decide),
        (_START.format("coin-flip"), "  '(!call-now c (io/flip)))))"),
    ]
    h = Harness(backend or ScriptedBackend(rules), ToolBox(seed=seed), cfg)
    v = h.run("coin-flip depth=0")
    flips = []
    for r in sorted(h.runs, key=lambda r: r.depth):
        m = re.search(r"\(def c \"(heads|tails)\"\)", r.prefixes[-1] if r.prefixes else "")
        if m:
            flips.append(m.group(1))
    expected = flips.index("heads") if "heads" in flips else None
    checks = {
        "value = number of tails before the first heads": expected is not None and v == expected,
        "one run per flip, stops at heads": len(flips) == (expected or 0) + 1 and len(h.runs) == len(flips),
    }
    return TaskResult("coin_flip", v, checks, h)


# -- 3. auction with 3 bidders --------------------------------------------------------------------
def auction(seed: int, cfg: HarnessConfig, backend: Backend | None = None, n_bidders: int = 3) -> TaskResult:
    bids = [int(b) for b in np.random.default_rng(seed).integers(10, 100, size=n_bidders)]
    calls = " ".join(f"(!llm-self {pr_str(f'bidder {k + 1}: bid for the lamp')})" for k in range(n_bidders))
    rules = [
        (r"\A;; bidder (\d+):", lambda m, p: f"  '{bids[int(m.group(1)) - 1]})))"),
        (
            r"\(def bids \[[\d ]*\]\)\n\Z",
            "  (def best (apply max bids))\n  '{:bids bids :winner (inc (index-of bids best)) :price best})))",
        ),
        (_START.format("auction"), f"  '(!call-now bids [{calls}]))))"),
    ]
    h = Harness(backend or ScriptedBackend(rules), ToolBox(seed=seed), cfg)
    v = h.run(f"auction: {n_bidders} bidders for a lamp")
    children = _child_values(h)
    ok = isinstance(v, dict) and not is_error(v)
    report_bids = list(v.get(Keyword("bids"), [])) if ok else []
    checks = {
        "report bids = children's return values": ok and report_bids == children and len(children) == n_bidders,
        "winner is the highest bid": ok
        and v.get(Keyword("price")) == max(children or [0])
        and v.get(Keyword("winner")) == children.index(max(children)) + 1,
    }
    return TaskResult("auction", v, checks, h)


# -- 4. twenty questions: the secret never enters a worker prefix --------------------------------
def _guesser(m: re.Match[str], prefix: str) -> str:
    lo, hi = 1, 100
    for g, fb in re.findall(r"\[(\d+) \\?\"(higher|lower)\\?\"\]", m.group(1)):
        if fb == "higher":
            lo = max(lo, int(g) + 1)
        else:
            hi = min(hi, int(g) - 1)
    return f"  '{(lo + hi) // 2})))"


def twenty_questions(seed: int, cfg: HarnessConfig, backend: Backend | None = None, max_guesses: int = 8) -> TaskResult:
    secret = int(np.random.default_rng(seed).integers(2, 100))
    ask = '(!llm-self (str "twenty-questions guesser; feedback so far: " (pr-str h)))'
    rules = [
        (r"\A;; twenty-questions guesser; feedback so far: (.*?)\n\(quine", _guesser),
        (
            r"\(def g (\d+)\)\n\Z",
            '  (def h (conj h [g (cond (= g secret) "correct" (< g secret) "higher" :else "lower")]))\n'
            f"  '(if (= g secret) {{:found g :guesses (count h)}} (!call-now g {ask})))))",
        ),
        (_START.format("twenty-questions host"), f"  (def secret {secret})\n  (def h [])\n  '(!call-now g {ask}))))"),
    ]
    h = Harness(backend or ScriptedBackend(rules), ToolBox(seed=seed), cfg)
    v = h.run(f"twenty-questions host: your secret number is {secret}; a worker guesses it in 1..100")
    workers = [r for r in h.runs if r.parent == "root"]
    leak = [r.path for r in workers for p in r.prefixes if re.search(rf"\b{secret}\b", p)]
    ok = isinstance(v, dict) and not is_error(v)
    checks = {
        "secret found": ok and v.get(Keyword("found")) == secret,
        f"≤ {max_guesses} guesses": 0 < len(workers) <= max_guesses,
        "secret never in a worker prefix": not leak,
    }
    return TaskResult("twenty_questions", v, checks, h)


# -- 5. telephone relay through 8 stages ----------------------------------------------------------
def telephone(seed: int, cfg: HarnessConfig, backend: Backend | None = None, stages: int = 8) -> TaskResult:
    words = ["amber", "falcon", "quiet", "river", "seven", "lantern", "orbit", "velvet", "copper", "meadow"]
    rng = np.random.default_rng(seed)
    message = " ".join(rng.choice(words, size=4))

    def relay(m: re.Match[str], prefix: str) -> str:
        s, n, msg = int(m.group(1)), int(m.group(2)), m.group(3)
        if s >= n:
            return f"  '{pr_str(msg)})))"
        return f"  '(!llm-self {pr_str(f'telephone stage={s + 1} of {n}: message={msg}')}))))"

    rules = [(r"\A;; telephone stage=(\d+) of (\d+): message=(.*?)\n\(quine", relay)]
    h = Harness(backend or ScriptedBackend(rules), ToolBox(seed=seed), cfg)
    v = h.run(f"telephone stage=0 of {stages}: message={message}")
    depth = max(r.depth for r in h.runs)
    checks = {
        "message arrives intact": v == message,
        f"{stages} relays in a chain": depth == stages and len(h.runs) == stages + 1,
    }
    return TaskResult("telephone", v, checks, h)


GAME_FNS: dict[str, Callable[..., TaskResult]] = {
    "hello": hello,
    "coin_flip": coin_flip,
    "auction": auction,
    "twenty_questions": twenty_questions,
    "telephone": telephone,
}


# -- 6. needle in a virtual file system under a context budget ------------------------------------
_WORDS = "alpha beta gamma delta omega kappa sigma theta lorem ipsum dolor amet vector matrix signal".split()


def make_files(n_files: int, file_tokens: int, needle_file: int, seed: int) -> tuple[dict[str, str], str]:
    """N files of ≈file_tokens tokens (4 chars each) of filler; one holds 'the secret code is <CODE>'."""
    rng = np.random.default_rng(seed)
    code = "".join(rng.choice(list("ABCDEFGHJKLMNPQRSTUVWXYZ23456789"), size=6))
    files = {}
    for i in range(n_files):
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < 4 * file_tokens:
            words.append(str(rng.choice(_WORDS)))
        if i == needle_file:
            words.insert(int(rng.integers(0, len(words))), f"the secret code is {code}.")
        files[f"f{i:02d}.txt"] = " ".join(words)
    return files, code


def needle_position(pos: str, n_files: int, seed: int) -> int:
    return {"first": 0, "middle": n_files // 2, "last": n_files - 1}.get(
        pos, int(np.random.default_rng(seed + 1).integers(0, n_files))
    )


NEEDLE_RE = r"secret code is (\w+)"


def spell_needle_backend(chunk_chars: int) -> ScriptedBackend:
    """Scripted Spell agent: list files, then !peek one chunk at a time, persisting only the cursor (i, j)."""

    def after_ls(m: re.Match[str], prefix: str) -> str:
        peek = f"'(!peek content (io/read-range (nth files i) j (+ j {chunk_chars})))"
        return f"  (persist i 0)\n  (persist j 0)\n  {peek})))"

    def after_peek(m: re.Match[str], prefix: str) -> str:
        at = prefix.rfind("(def content ")
        content = read(prefix[at:].split("\n", 1)[0])[2]
        if re.search(NEEDLE_RE, content):
            return f"  (persist code (second (strings/re-find {pr_str(NEEDLE_RE)} content)))\n  'code)))"
        n_files = len(read(prefix[prefix.rfind("(def files ") :].split("\n", 1)[0])[2])
        i = int(re.findall(r"\(persist i (\d+)\)", prefix)[-1])
        if len(content) < chunk_chars:  # end of this file
            if i + 1 >= n_files:
                return "  'nil)))"
            step = "  (persist i (inc i))\n  (persist j 0)\n"
        else:
            step = f"  (persist j (+ j {chunk_chars}))\n"
        return step + f"  '(!peek content (io/read-range (nth files i) j (+ j {chunk_chars}))))))"

    return ScriptedBackend(
        [
            (r"\(prune \d+\)\n\Z", after_peek),
            (r"\(def files \[.*\]\)\n\Z", after_ls),
            (_START.format("needle"), "  '(!call-now files (io/ls)))))"),
        ],
        tail_chars=2000,
    )


# -- 7. templated GSM problems with a calculator ---------------------------------------------------
_GSM = [
    ("{a} boxes each hold {b} pens and {c} pens are lost. How many pens are left?", "{a}*{b}-{c}"),
    (
        "A shop sells {a} apples in the morning and {b} in the afternoon at {c} dollars each. "
        "How many dollars does it take in?",
        "({a}+{b})*{c}",
    ),
    ("Tom has {a} marbles and gives {b} to each of his {c} friends. How many marbles does he keep?", "{a}-{b}*{c}"),
    ("A train runs at {a} km per hour for {b} hours and then {c} km more. How far does it go?", "{a}*{b}+{c}"),
]


def make_gsm(n: int, seed: int) -> list[tuple[str, int, str]]:
    """n templated word problems (question, answer, calculator expression), seeded."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        q, e = _GSM[i % len(_GSM)]
        b, c = int(rng.integers(2, 30)), int(rng.integers(2, 12))
        a = int(rng.integers(b * c + 1, b * c + 500))
        expr = e.format(a=a, b=b, c=c)
        out.append((q.format(a=a, b=b, c=c), int(eval_int(expr)), expr))
    return out


def eval_int(expr: str) -> int:
    from compute.spell.harness import calc

    return int(calc(expr))


def gsm_expression(question: str) -> str:
    """The scripted model's reading of a templated problem: the calculator expression it writes."""
    nums = re.findall(r"\d+", question)
    for q, e in _GSM:
        pat = re.escape(q).replace(r"\{a\}", r"(\d+)").replace(r"\{b\}", r"(\d+)").replace(r"\{c\}", r"(\d+)")
        m = re.fullmatch(pat, question)
        if m:
            return e.format(a=m.group(1), b=m.group(2), c=m.group(3))
    return "+".join(nums) or "0"


def spell_gsm_backend() -> ScriptedBackend:
    """Scripted Spell agent: write the expression, call io/calc via !call-now, return the bound result."""

    def first(m: re.Match[str], prefix: str) -> str:
        return f"  '(!call-now r (io/calc {pr_str(gsm_expression(m.group(1)))})))))"

    return ScriptedBackend(
        [(r"\(def r -?\d+\)\n\Z", "  'r)))"), (r"\A;; gsm: (.*?)\n\(quine completion \(eval \(do\n\Z", first)]
    )

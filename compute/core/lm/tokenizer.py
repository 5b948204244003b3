"""Closed-vocabulary tokenizers for the synthetic tasks (design choice, spec §2 "Tokenizers").

* ``CharTokenizer``: one token per character (arithmetic, Countdown), plus specials and role tokens.
* ``WordTokenizer``: one token per word / punctuation mark / digit (templated word problems).

Both reserve ids 0, 1, 2 for ``<pad>``, ``<bos>``, ``<eos>``.  Plug-ins add role tokens (``<solve>``,
``<adv>``…) with ``extra_tokens`` *before* the SFT build; the vocabulary is then fixed per checkpoint
and stored with it (``to_dict`` / ``tokenizer_from_dict``).
"""

from __future__ import annotations

import re
from typing import Any

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
SPECIALS = (PAD, BOS, EOS)
_SPECIAL_RE = re.compile(r"<[a-z_0-9]+>")


class Tokenizer:
    """Base: a fixed list of symbols; ids are list positions."""

    kind = "base"

    def __init__(self, symbols: list[str], extra_tokens: tuple[str, ...] | list[str] = ()) -> None:
        seen: list[str] = []
        for s in [*SPECIALS, *extra_tokens, *symbols]:
            if s not in seen:
                seen.append(s)
        for t in extra_tokens:
            if not _SPECIAL_RE.fullmatch(t):
                raise ValueError(f"role token {t!r} must look like <name>")
        self.symbols = seen
        self.extra_tokens = tuple(extra_tokens)
        self.stoi = {s: i for i, s in enumerate(seen)}
        self.pad_id, self.bos_id, self.eos_id = 0, 1, 2

    @property
    def vocab_size(self) -> int:
        return len(self.symbols)

    def token_id(self, symbol: str) -> int:
        return self.stoi[symbol]

    def _pieces(self, text: str) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        """Text → ids.  Raises KeyError on a symbol outside the closed vocabulary."""
        out = []
        for p in self._pieces(text):
            if p not in self.stoi:
                raise KeyError(f"symbol {p!r} is not in the {self.kind} vocabulary")
            out.append(self.stoi[p])
        return out

    def decode(self, ids: list[int], skip_special: bool = True) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "symbols": self.symbols, "extra_tokens": list(self.extra_tokens)}


class CharTokenizer(Tokenizer):
    """One token per character; ``<name>`` special/role tokens are single tokens."""

    kind = "char"

    def _pieces(self, text: str) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(text):
            m = _SPECIAL_RE.match(text, i)
            if m and m.group(0) in self.stoi:
                out.append(m.group(0))
                i = m.end()
            else:
                out.append(text[i])
                i += 1
        return out

    def decode(self, ids: list[int], skip_special: bool = True) -> str:
        parts = []
        for i in ids:
            s = self.symbols[int(i)]
            if skip_special and s in SPECIALS:
                continue
            parts.append(s)
        return "".join(parts)


_WORD_RE = re.compile(r"<[a-z_0-9]+>|\d|[A-Za-z]+|[^\sA-Za-z\d]")


class WordTokenizer(Tokenizer):
    """Words, single digits and punctuation marks.  Canonical text: tokens separated by one space,
    except that consecutive digits are written together ("tom has 12 apples .").  ``decode(encode(t)) == t``
    holds for canonical text."""

    kind = "word"

    def _pieces(self, text: str) -> list[str]:
        return _WORD_RE.findall(text)

    def decode(self, ids: list[int], skip_special: bool = True) -> str:
        out = ""
        prev_digit = False
        for i in ids:
            s = self.symbols[int(i)]
            if skip_special and s in SPECIALS:
                continue
            is_digit = s.isdigit()
            if out and not (is_digit and prev_digit):
                out += " "
            out += s
            prev_digit = is_digit
        return out


def tokenizer_from_dict(d: dict[str, Any]) -> Tokenizer:
    """Rebuild a tokenizer stored with a checkpoint (the exact symbol order is kept)."""
    cls = {"char": CharTokenizer, "word": WordTokenizer}[d["kind"]]
    tok = cls([], d.get("extra_tokens", ()))
    tok.symbols = list(d["symbols"])
    tok.stoi = {s: i for i, s in enumerate(tok.symbols)}
    return tok

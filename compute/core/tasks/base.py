"""The verifiable-task protocol (spec grpo_core §2 "Tasks") and the split rule shared by all generators.

A task has a closed-vocabulary ``tokenizer`` and three calls:

* ``sample(n, rng, split)`` → n problems of the "train" or "test" split;
* ``prompt(problem, role="solve", ctx=None)`` → prompt token ids (starting with ``<bos>``);
* ``verify(problem, text)`` → (reward, correct, info); malformed output scores 0 and never raises.

plus ``solution(problem, rng)`` → an oracle response text (with the task's SFT noise / alternative strategies)
used by the SFT warm-up.

**Splits** (design choice): train and test draw from disjoint seed namespaces *and* a problem-hash filter —
a problem whose key hashes to 0 mod ``TEST_MODULUS`` belongs to test only, every other problem to train only —
so no test problem can ever appear in training, whatever the seeds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from compute.core.lm.tokenizer import Tokenizer

TEST_MODULUS = 5  # one problem in five (by hash) is reserved for the held-out split


@dataclass
class Problem:
    """One task instance.  ``key`` identifies it (used for the split hash), ``answer`` is the ground truth."""

    key: str
    question: str
    answer: Any
    data: dict[str, Any] = field(default_factory=dict)


def in_split(key: str, split: str) -> bool:
    """True when a problem with this key belongs to ``split`` ("train" or "test")."""
    h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    is_test = h % TEST_MODULUS == 0
    if split == "test":
        return is_test
    if split == "train":
        return not is_test
    raise ValueError(f"split must be 'train' or 'test', got {split!r}")


def split_rng(seed: int, split: str) -> np.random.Generator:
    """Disjoint seed namespaces: train ↦ (seed, 0), test ↦ (seed, 1)."""
    return np.random.default_rng([int(seed), {"train": 0, "test": 1}[split]])


class Task(Protocol):
    name: str
    tokenizer: Tokenizer

    def sample(self, n: int, rng: np.random.Generator, split: str) -> list[Problem]: ...

    def prompt(self, problem: Problem, role: str = "solve", ctx: dict[str, Any] | None = None) -> list[int]: ...

    def verify(self, problem: Problem, text: str) -> tuple[float, bool, dict[str, Any]]: ...

    def solution(self, problem: Problem, rng: np.random.Generator | None = None) -> str: ...


def sample_filtered(n: int, rng: np.random.Generator, split: str, draw: Any, max_tries: int = 1000) -> list[Problem]:
    """Draw problems with ``draw(rng)`` until n of them pass the split filter."""
    out: list[Problem] = []
    tries = 0
    while len(out) < n:
        p = draw(rng)
        tries += 1
        if in_split(p.key, split):
            out.append(p)
        elif tries > max_tries * max(n, 1):
            raise RuntimeError(f"could not draw {n} {split} problems: the problem space is too small")
    return out


def role_prefix(tokenizer: Tokenizer, role: str) -> list[int]:
    """``<bos>`` then the role token ``<role>`` when the tokenizer has it ("solve" needs none)."""
    ids = [tokenizer.bos_id]
    tok = f"<{role}>"
    if role != "solve" or tok in tokenizer.stoi:
        if tok not in tokenizer.stoi:
            raise KeyError(f"role token {tok} is not registered (add it via extra_tokens before the SFT build)")
        ids.append(tokenizer.stoi[tok])
    return ids

"""Robustness evaluation (spec seirenes §3 E2/E3): greedy accuracy on held-out problems under fixed hint suites."""

from __future__ import annotations

import numpy as np
import torch

from compute.core.lm.model import TinyLM
from compute.core.lm.sampling import generate
from compute.core.tasks.base import Problem
from compute.seirenes.hints import EOH, HELDOUT_FAMILIES, TRAIN_FAMILIES, check_hint, random_hint, sample_hint
from compute.seirenes.task import SeirenesTask


def grammar_suite(problems: list[Problem], families: tuple[str, ...], seed: int) -> list[str]:
    """One fixed hint per problem, family cycling through ``families`` (same suite for every model)."""
    rng = np.random.default_rng(seed)
    return [random_hint(p, families[i % len(families)], rng) for i, p in enumerate(problems)]


@torch.no_grad()
def adversary_texts(
    model: TinyLM,
    task: SeirenesTask,
    problems: list[Problem],
    n: int,
    temperature: float,
    max_new: int,
    generator: torch.Generator,
) -> list[list[str]]:
    """``n`` decoded samples of ``model``'s Adversary role per problem (``<adv> Q → hint <eoh>``)."""
    tok = task.tokenizer
    g = generate(
        model,
        [task.prompt(p, "adv") for p in problems],
        n=n,
        temperature=temperature,
        max_new=max_new,
        eos_id=tok.eos_id,
        pad_id=tok.pad_id,
        generator=generator,
    )
    texts = [tok.decode(g.response[r][g.response_mask[r] > 0].tolist()) for r in range(len(g.response))]
    return [texts[i * n : (i + 1) * n] for i in range(len(problems))]


@torch.no_grad()
def adversary_suite(
    model: TinyLM,
    task: SeirenesTask,
    problems: list[Problem],
    seed: int,
    tries: int = 4,
    max_tokens: int = 24,
    max_sentences: int = 1,
) -> tuple[list[str], float]:
    """Hints written by ``model``'s Adversary role (T = 1, first valid of ``tries`` samples; a random training-
    family hint when none is valid).  Returns the hints and the fraction that came from the Adversary."""
    texts = adversary_texts(model, task, problems, tries, 1.0, max_tokens + 2, torch.Generator().manual_seed(seed))
    rng = np.random.default_rng(seed)
    hints, own = [], 0
    for i, p in enumerate(problems):
        body = None
        for text in texts[i]:
            ok, _, b = check_hint(text, int(p.answer), max_tokens, max_sentences)
            if ok:
                body = b
                break
        own += body is not None
        hints.append(body if body is not None else sample_hint(p, rng, max_sentences)[0])
    return hints, own / max(1, len(problems))


@torch.no_grad()
def accuracy(
    model: TinyLM, task: SeirenesTask, problems: list[Problem], hints: list[str] | None = None, max_new: int = 40
) -> float:
    """Greedy accuracy; with ``hints`` each prompt is ``Q <h> hint`` and the answer is still the original gold."""
    tok = task.tokenizer
    prompts = [task.prompt(p, "solve", {"hint": hints[i]} if hints else None) for i, p in enumerate(problems)]
    g = generate(model, prompts, temperature=0.0, max_new=max_new, eos_id=tok.eos_id, pad_id=tok.pad_id)
    ok = 0
    for i, p in enumerate(problems):
        ok += task.verify(p, tok.decode(g.response[i][g.response_mask[i] > 0].tolist()))[1]
    return ok / max(1, len(problems))


def suites(problems: list[Problem], seed: int, max_sentences: int = 1) -> dict[str, list[str] | None]:
    """Fixed suites; with compound hints (S > 1) also ``train_compound``: random 1…S-sentence training hints."""
    out: dict[str, list[str] | None] = {
        "clean": None,
        "train_family": grammar_suite(problems, TRAIN_FAMILIES, seed + 1),
        "heldout": grammar_suite(problems, HELDOUT_FAMILIES, seed + 2),
    }
    if max_sentences > 1:
        rng = np.random.default_rng(seed + 3)
        out["train_compound"] = [sample_hint(p, rng, max_sentences)[0] for p in problems]
    return out


__all__ = ["EOH", "accuracy", "adversary_suite", "adversary_texts", "grammar_suite", "suites"]

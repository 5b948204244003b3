"""Model-level quality of a sparse FFN: perplexity, KL(dense‖sparse), top-1 agreement, arithmetic accuracy.

A method is a list of per-layer FFN modules (``MaskedFFN``); ``swap_ffn`` plugs them into the TinyLM blocks for
the duration of a ``with`` block and restores the dense modules afterwards.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

from compute.core.lm.model import TinyLM
from compute.core.lm.sampling import generate
from compute.svd_sparsity import data as D
from compute.svd_sparsity.executor import MaskedFFN


@contextmanager
def swap_ffn(model: TinyLM, modules: list[nn.Module]) -> Iterator[TinyLM]:
    old = [blk.ffn for blk in model.blocks]
    try:
        for blk, m in zip(model.blocks, modules, strict=True):
            blk.ffn = m
        yield model
    finally:
        for blk, m in zip(model.blocks, old, strict=True):
            blk.ffn = m


@torch.no_grad()
def compare_methods(
    model: TinyLM, tokens: torch.Tensor, methods: dict[str, list[MaskedFFN]], batch: int = 8
) -> dict[str, dict[str, float | list[float]]]:
    """Dense vs each method on windows ``tokens`` [n, T+1] (targets = next token).

    Per method: ce, ppl, ppl_ratio (sparse/dense), kl (mean per token, nats), top1 (agreement of argmax with
    dense), density / recall per layer (fraction of neurons computed; of truly active neurons kept).
    """
    acc = {k: {"ce": 0.0, "kl": 0.0, "top1": 0.0} for k in ["dense", *methods]}
    n_tok = 0
    for i in range(0, len(tokens), batch):
        tb = tokens[i : i + batch]
        inp, tgt = tb[:, :-1], tb[:, 1:].reshape(-1)
        ld = model(inp).flatten(0, 1).float()
        lpd = F.log_softmax(ld, -1)
        acc["dense"]["ce"] += float(F.nll_loss(lpd, tgt, reduction="sum"))
        top_d = ld.argmax(-1)
        for name, mods in methods.items():
            with swap_ffn(model, mods):
                ls = model(inp).flatten(0, 1).float()
            lps = F.log_softmax(ls, -1)
            acc[name]["ce"] += float(F.nll_loss(lps, tgt, reduction="sum"))
            acc[name]["kl"] += float((lpd.exp() * (lpd - lps)).sum())
            acc[name]["top1"] += float((ls.argmax(-1) == top_d).sum())
        n_tok += tgt.numel()
    out: dict[str, dict[str, float | list[float]]] = {}
    ce_d = acc["dense"]["ce"] / n_tok
    for name, a in acc.items():
        ce = a["ce"] / n_tok
        row: dict[str, float | list[float]] = {
            "ce": ce,
            "ppl": math.exp(ce),
            "ppl_ratio": math.exp(ce - ce_d),
            "kl": a["kl"] / n_tok,
            "top1": a["top1"] / n_tok if name != "dense" else 1.0,
        }
        if name != "dense":
            mods = methods[name]
            row["density"] = [m.kept / max(1.0, m.total) for m in mods]
            row["recall"] = [m.hit / max(1.0, m.active) for m in mods]
        out[name] = row
    return out


@torch.no_grad()
def arithmetic_accuracy(
    model: TinyLM, tokenizer, n_problems: int, seed: int, max_digits: int = 2, max_new: int = 40
) -> float:
    """Greedy exact-answer accuracy on held-out (test-split) arithmetic problems of the shared task."""
    task = D.arithmetic_task(max_digits)
    from compute.core.tasks.base import split_rng

    problems = task.sample(n_problems, split_rng(seed, "test"), "test")
    prompts = [[D.BOS_ID, *tokenizer.encode(p.question + "=").ids] for p in problems]
    correct = 0
    for i in range(0, len(prompts), 64):
        g = generate(model, prompts[i : i + 64], temperature=0.0, max_new=max_new, eos_id=D.EOS_ID, pad_id=D.PAD_ID)
        for j, p in enumerate(problems[i : i + 64]):
            ids = g.response[j][g.response_mask[j] > 0].tolist()
            ids = [t for t in ids if t > D.EOS_ID]
            correct += task.verify(p, tokenizer.decode(ids))[1]
    return correct / max(1, n_problems)

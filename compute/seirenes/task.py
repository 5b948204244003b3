"""The Seirênes task (word problems with role prompts and hints) and its SFT warm-up (spec seirenes §2).

Prompts: ``<bos> Q`` (clean solve), ``<bos> Q <h> hint`` (hinted solve; the hint is prompt, never loss),
``<bos> <adv> Q`` (Adversary; ``<bos> <adv> Q answer N`` with ``adv_sees_answer``).  The Adversary's response is
``hint <eoh> <eos>``.  The verifier is the core's word-problem checker against the original gold answer.

SFT mixture (spec §2 "SFT warm start"): 60 % clean traces, 25 % traces under a random training-family hint,
15 % ``<adv>`` examples with a random valid hint.  The loop reuses the core's model, loss, optimiser and LR
schedule; only the data mixture is new (the core's ``train_sft`` builds its task from the registry, so a
plug-in cannot inject this mixture; see the docs).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.lm.optim import AdamW
from compute.core.lm.sampling import right_pad
from compute.core.lm.sft import CORE_VERSION, SFTConfig, lr_at, sft_loss
from compute.core.tasks.base import Problem, split_rng
from compute.core.tasks.wordproblems import WordProblems
from compute.seirenes.hints import EOH, EXTRA_TOKENS, sample_hint


class SeirenesTask(WordProblems):
    """Word problems whose prompts can carry a hint, plus the Adversary role."""

    name = "seirenes_wordproblems"

    def __init__(self, min_ops: int = 2, max_ops: int = 4, n_distractors: int = 0, adv_sees_answer: bool = False):
        super().__init__(min_ops, max_ops, n_distractors, extra_tokens=EXTRA_TOKENS)
        self.adv_sees_answer = adv_sees_answer

    def prompt(self, problem: Problem, role: str = "solve", ctx: dict[str, Any] | None = None) -> list[int]:
        tok = self.tokenizer
        if role == "adv":
            q = problem.question + (f" answer {problem.answer}" if self.adv_sees_answer else "")
            return [tok.bos_id, tok.stoi["<adv>"], *tok.encode(q)]
        ids = [tok.bos_id, *tok.encode(problem.question)]
        hint = (ctx or {}).get("hint")
        if hint:
            ids += [tok.stoi["<h>"], *tok.encode(hint)]
        return ids


@dataclass
class SeirenesSFTConfig:
    """SFT build of the shared checkpoint (both roles)."""

    size: str = "small"
    tokens: int = 600_000
    lr: float = 2e-3
    batch_size: int = 64
    min_ops: int = 2
    max_ops: int = 3
    p_hinted: float = 0.25
    p_adv: float = 0.15
    adv_sees_answer: bool = False
    hint_sentences: int = 1  # compound hints: 1…S training-family sentences (1 = the single-sentence grammar)
    compound_solves: bool = False  # also solve under compound hints in SFT (default: the Adversary's examples only)
    max_len: int = 192
    seed: int = 0

    def core(self) -> SFTConfig:
        return SFTConfig(size=self.size, tokens=self.tokens, lr=self.lr, batch_size=self.batch_size, seed=self.seed)


def make_task(cfg: SeirenesSFTConfig) -> SeirenesTask:
    return SeirenesTask(cfg.min_ops, cfg.max_ops, 0, cfg.adv_sees_answer)


def sft_example(task: SeirenesTask, p: Problem, rng: np.random.Generator, cfg: SeirenesSFTConfig) -> tuple[list, list]:
    """(prompt ids, response ids + eos) from the 60/25/15 mixture."""
    u = rng.random()
    tok = task.tokenizer
    if u < cfg.p_adv:
        hint, _ = sample_hint(p, rng, cfg.hint_sentences)
        return task.prompt(p, "adv"), tok.encode(f"{hint} {EOH}") + [tok.eos_id]
    s = cfg.hint_sentences if cfg.compound_solves else 1  # spec: solves under one random training-family hint
    ctx = {"hint": sample_hint(p, rng, s)[0]} if u < cfg.p_adv + cfg.p_hinted else None
    return task.prompt(p, "solve", ctx), tok.encode(task.solution(p, rng)) + [tok.eos_id]


def sft_batch(task: SeirenesTask, problems: list[Problem], rng: np.random.Generator, cfg: SeirenesSFTConfig):
    seqs, masks = [], []
    for p in problems:
        pr, rs = sft_example(task, p, rng, cfg)
        seqs.append(pr + rs)
        masks.append([0] * len(pr) + [1] * len(rs))
    tok, valid = right_pad(seqs, task.tokenizer.pad_id)
    m, _ = right_pad(masks, 0)
    return tok, m.float() * valid


def checkpoint_path(cfg: SeirenesSFTConfig, data_dir: str | Path) -> Path:
    task = make_task(cfg)
    d = asdict(cfg)
    if d["hint_sentences"] == 1 and not d["compound_solves"]:  # keeps the single-sentence builds' cache names
        del d["hint_sentences"], d["compound_solves"]
    blob = json.dumps({"cfg": d, "tok": task.tokenizer.to_dict(), "core": CORE_VERSION}, sort_keys=True)
    return Path(data_dir) / "seirenes" / f"sft-{cfg.size}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}.pt"


def load_or_build(cfg: SeirenesSFTConfig, data_dir: str | Path, reporter: Any = None) -> tuple[TinyLM, SeirenesTask]:
    """The cached shared checkpoint, built on first use (streams ``sft/train_loss``)."""
    task = make_task(cfg)
    path = checkpoint_path(cfg, data_dir)
    lm_cfg = LMConfig.sized(cfg.size, task.tokenizer.vocab_size, max_len=cfg.max_len)
    if path.exists():
        blob = torch.load(path, map_location="cpu", weights_only=False)
        model = TinyLM(LMConfig(**blob["lm"]))
        model.load_state_dict(blob["state_dict"])
        if reporter is not None:
            reporter.log(f"SFT checkpoint cache hit: {path.name}")
        return model.eval(), task
    if reporter is not None:
        reporter.log(f"building SFT checkpoint {path.name}")
    torch.manual_seed(cfg.seed)
    model = TinyLM(lm_cfg)
    rng = split_rng(cfg.seed, "train")
    probe, _ = sft_batch(task, task.sample(64, np.random.default_rng(cfg.seed + 99), "train"), rng, cfg)
    per_ex = float((probe != task.tokenizer.pad_id).sum()) / 64
    total = max(1, int(cfg.tokens / (per_ex * cfg.batch_size)))
    core = cfg.core()
    opt = AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=core.weight_decay)
    t0 = time.perf_counter()
    model.train()
    for step in range(total):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, total, core)
        tok, mask = sft_batch(task, task.sample(cfg.batch_size, rng, "train"), rng, cfg)
        loss = sft_loss(model, tok, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), core.grad_clip)
        opt.step()
        if reporter is not None and (step % 20 == 0 or step == total - 1):
            reporter.scalar("sft/train_loss", step, float(loss.detach()))
            reporter.progress(0.3 * (step + 1) / total, f"SFT step {step + 1}/{total}, loss {float(loss.detach()):.3f}")
    model.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    meta = {"steps": total, "seconds": time.perf_counter() - t0}
    torch.save({"lm": model.cfg.to_dict(), "state_dict": model.state_dict(), "meta": meta}, tmp)
    os.replace(tmp, path)
    return model, task

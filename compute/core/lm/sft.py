"""SFT warm-up: teach the tiny LM a task's oracle traces, cache the checkpoint (spec grpo_core §2 "SFT warm-up").

Loss: cross-entropy on response tokens only (design choice), L = −Σ_t m_t log π(y_t | x, y_<t) / Σ_t m_t.
AdamW, linear warm-up then cosine decay to lr/10 (nanoGPT's rule of thumb).  Traces come from the task's
solver with its noise / alternative strategies, so the warm-up policy has non-trivial entropy.

The checkpoint is keyed by a hash of (model config, tokenizer, task config, SFT config, seed, core version) and
stored at ``data_dir/grpo_core/sft-<hash>.pt`` with its resolved config; any change rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.lm.optim import AdamW
from compute.core.lm.sampling import generate, right_pad
from compute.core.lm.tokenizer import Tokenizer, tokenizer_from_dict
from compute.core.tasks import Task, TaskConfig, make_task, split_rng

CORE_VERSION = "1"  # bump when a change to the core invalidates cached checkpoints
EVAL_ONLY = ("eval_every", "n_val", "max_new")  # validation settings: they do not change the weights


@dataclass
class SFTConfig:
    """One SFT build.  ``tokens`` is the budget of trained (prompt + response) tokens."""

    task: TaskConfig = field(default_factory=TaskConfig)
    size: str = "small"  # micro | small | medium | large (see compute.core.lm.model.SIZES)
    ffn: str = "gelu"
    max_len: int = 192
    extra_tokens: tuple[str, ...] = ()  # plug-in role tokens, fixed per checkpoint
    tokens: int = 600_000
    batch_size: int = 64
    lr: float = 1e-3
    min_lr_ratio: float = 0.1
    warmup_frac: float = 0.05
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_every: int = 100  # optimizer steps between validation passes
    n_val: int = 200  # held-out problems for the greedy-accuracy check
    max_new: int = 64
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["extra_tokens"] = list(self.extra_tokens)
        return d


@dataclass
class SFTResult:
    model: TinyLM
    task: Task
    tokenizer: Tokenizer
    path: Path
    cached: bool
    meta: dict[str, Any]


def checkpoint_key(cfg: SFTConfig) -> str:
    """Hash of everything that determines the checkpoint."""
    task = make_task(cfg.task, cfg.extra_tokens)
    lm = LMConfig.sized(cfg.size, task.tokenizer.vocab_size, ffn=cfg.ffn, max_len=cfg.max_len)
    sft = {k: v for k, v in cfg.to_dict().items() if k not in EVAL_ONLY}
    blob = json.dumps(
        {"lm": lm.to_dict(), "tok": task.tokenizer.to_dict(), "sft": sft, "core": CORE_VERSION},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def checkpoint_path(cfg: SFTConfig, data_dir: str | Path) -> Path:
    return Path(data_dir) / "grpo_core" / f"sft-{cfg.task.name}-{cfg.size}-{checkpoint_key(cfg)}.pt"


def encode_example(task: Task, problem: Any, response: str) -> tuple[list[int], list[int]]:
    """(prompt ids, response ids + <eos>)."""
    return task.prompt(problem), task.tokenizer.encode(response) + [task.tokenizer.eos_id]


def sft_batch(task: Task, problems: list[Any], rng: np.random.Generator | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded [prompt; response; eos] sequences and the loss mask on response positions (targets)."""
    seqs, masks = [], []
    for p in problems:
        pr, rs = encode_example(task, p, task.solution(p, rng))
        seqs.append(pr + rs)
        masks.append([0] * len(pr) + [1] * len(rs))
    tok, valid = right_pad(seqs, task.tokenizer.pad_id)
    m, _ = right_pad(masks, 0)
    return tok, m.float() * valid


def sft_loss(model: TinyLM, tok: torch.Tensor, loss_mask: torch.Tensor) -> torch.Tensor:
    """Masked next-token cross-entropy (response tokens only)."""
    logits = model(tok[:, :-1])
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), tok[:, 1:].reshape(-1), reduction="none")
    m = loss_mask[:, 1:].reshape(-1)
    return (ce * m).sum() / m.sum().clamp(min=1)


@torch.no_grad()
def greedy_accuracy(model: TinyLM, task: Task, problems: list[Any], max_new: int = 64, batch: int = 256) -> float:
    """Fraction of problems whose greedy response verifies."""
    correct = 0
    for i in range(0, len(problems), batch):
        chunk = problems[i : i + batch]
        g = generate(
            model,
            [task.prompt(p) for p in chunk],
            temperature=0.0,
            max_new=max_new,
            eos_id=task.tokenizer.eos_id,
            pad_id=task.tokenizer.pad_id,
        )
        for j, p in enumerate(chunk):
            text = task.tokenizer.decode(g.response[j][g.response_mask[j] > 0].tolist())
            correct += task.verify(p, text)[1]
    return correct / max(1, len(problems))


@torch.no_grad()
def sampled_accuracy(
    model: TinyLM,
    task: Task,
    problems: list[Any],
    n: int = 4,
    max_new: int = 64,
    temperature: float = 1.0,
    seed: int = 0,
    batch: int = 128,
) -> float:
    """Mean pass@1 at temperature T: the fraction of n samples per problem that verify, averaged over problems."""
    gen = torch.Generator(device=model.device).manual_seed(seed)
    correct = 0
    for i in range(0, len(problems), batch):
        chunk = problems[i : i + batch]
        g = generate(
            model,
            [task.prompt(p) for p in chunk],
            n=n,
            temperature=temperature,
            max_new=max_new,
            eos_id=task.tokenizer.eos_id,
            pad_id=task.tokenizer.pad_id,
            generator=gen,
        )
        for r in range(len(chunk) * n):
            text = task.tokenizer.decode(g.response[r][g.response_mask[r] > 0].tolist())
            correct += task.verify(chunk[r // n], text)[1]
    return correct / max(1, n * len(problems))


def lr_at(step: int, total: int, cfg: SFTConfig) -> float:
    """Linear warm-up for warmup_frac·total steps, then cosine from lr to min_lr_ratio·lr."""
    warm = max(1, int(cfg.warmup_frac * total))
    if step < warm:
        return cfg.lr * (step + 1) / warm
    t = (step - warm) / max(1, total - warm)
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def train_sft(cfg: SFTConfig, reporter: Any = None, device: str = "cpu") -> tuple[TinyLM, Task, dict[str, Any]]:
    """Train from scratch; streams ``sft/*`` series through the reporter when given."""
    torch.manual_seed(cfg.seed)
    task = make_task(cfg.task, cfg.extra_tokens)
    lm_cfg = LMConfig.sized(cfg.size, task.tokenizer.vocab_size, ffn=cfg.ffn, max_len=cfg.max_len)
    model = TinyLM(lm_cfg).to(device)
    rng = split_rng(cfg.seed, "train")
    val_rng = split_rng(cfg.seed, "test")
    val_problems = task.sample(cfg.n_val, val_rng, "test")
    val_tok, val_mask = sft_batch(task, val_problems[: min(128, cfg.n_val)], None)
    # estimate tokens per example to turn the token budget into a step count
    probe_tok, _ = sft_batch(task, task.sample(64, np.random.default_rng(cfg.seed + 99), "train"), rng)
    tok_per_ex = float((probe_tok != task.tokenizer.pad_id).sum()) / 64
    total = max(1, int(cfg.tokens / (tok_per_ex * cfg.batch_size)))
    opt = AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=cfg.weight_decay)
    t0, seen, acc = time.perf_counter(), 0, float("nan")
    history: list[dict[str, float]] = []
    for step in range(total):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, total, cfg)
        tok, mask = sft_batch(task, task.sample(cfg.batch_size, rng, "train"), rng)
        tok, mask = tok.to(device), mask.to(device)
        loss = sft_loss(model, tok, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        seen += int((tok != task.tokenizer.pad_id).sum())
        last = step == total - 1
        if reporter is not None and (step % 10 == 0 or last):
            reporter.scalars(
                seen, {"sft/train_loss": float(loss.detach()), "sft/tokens_per_s": seen / (time.perf_counter() - t0)}
            )
            reporter.progress((step + 1) / total, f"SFT step {step + 1}/{total}, loss {float(loss.detach()):.3f}")
        if step % cfg.eval_every == 0 or last:
            model.eval()
            with torch.no_grad():
                vl = float(sft_loss(model, val_tok.to(device), val_mask.to(device)))
            if last or (step > 0 and step % (cfg.eval_every * 5) == 0):
                acc = greedy_accuracy(model, task, val_problems, cfg.max_new)
                if reporter is not None:
                    reporter.scalar("sft/val_accuracy", seen, acc)
            model.train()
            history.append({"step": step, "tokens": seen, "val_loss": vl, "val_accuracy": acc})
            if reporter is not None:
                reporter.scalar("sft/val_loss", seen, vl)
        if reporter is not None and reporter.should_stop():
            break
    meta = {
        "steps": step + 1,
        "tokens": seen,
        "seconds": time.perf_counter() - t0,
        "val_loss": history[-1]["val_loss"],
        "val_accuracy": acc,
        "n_params": model.n_params(),
    }
    model.eval()
    return model, task, meta


def load_or_build(
    cfg: SFTConfig, data_dir: str | Path, reporter: Any = None, device: str = "cpu", force: bool = False
) -> SFTResult:
    """Return the cached checkpoint for ``cfg`` or train and cache it (atomic write)."""
    path = checkpoint_path(cfg, data_dir)
    if path.exists() and not force:
        blob = torch.load(path, map_location=device, weights_only=False)
        tok = tokenizer_from_dict(blob["tokenizer"])
        task = make_task(cfg.task, cfg.extra_tokens)
        model = TinyLM(LMConfig(**blob["lm"])).to(device)
        model.load_state_dict(blob["state_dict"])
        model.eval()
        if reporter is not None:
            reporter.log(f"SFT checkpoint cache hit: {path.name}")
        return SFTResult(model, task, tok, path, True, blob["meta"])
    if reporter is not None:
        reporter.log(f"building SFT checkpoint {path.name}")
    model, task, meta = train_sft(cfg, reporter, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save(
        {
            "lm": model.cfg.to_dict(),
            "tokenizer": task.tokenizer.to_dict(),
            "sft": cfg.to_dict(),
            "core_version": CORE_VERSION,
            "meta": meta,
            "state_dict": model.state_dict(),
        },
        tmp,
    )
    os.replace(tmp, path)
    return SFTResult(model, task, task.tokenizer, path, False, meta)

"""SFT warm-up of the route-token policy (spec steer §2 "SFT"), cached like the core's build.

The core's ``load_or_build`` only knows the core's task registry, so this module runs the same recipe
(``compute.core.lm.sft``: response-only cross-entropy, AdamW β = (0.9, 0.95), wd 0.1, warm-up + cosine to lr/10)
on the driving task: a pool of train-split scenes drawn once, each SFT example one pool scene with a CoT trace
(probability ``p_cot`` = 0.8, independent of the tier) or a direct plan — so the model starts over-reasoning.
Checkpoint ``data_dir/steer/sft-<size>-<hash>.pt``; the hash covers the model config, vocabulary and SFT config.
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

from compute.core.lm.model import SIZES, LMConfig, TinyLM
from compute.core.lm.optim import AdamW
from compute.core.lm.sampling import right_pad
from compute.core.lm.sft import SFTConfig, lr_at, sft_loss
from compute.core.tasks.base import split_rng
from compute.steer.task import DrivingTask
from compute.steer.traces import REL_VERSION

VERSION = "1"
# "tiny" is this app's CPU size (design choice); the others are the core's
STEER_SIZES = {**SIZES, "tiny": {"d_model": 64, "n_layers": 3, "n_heads": 4, "d_ff": 256}}


@dataclass
class SteerSFTConfig:
    size: str = "tiny"
    tokens: int = 1_500_000  # trained (prompt + response) tokens
    lr: float = 3e-3
    batch_size: int = 64
    p_cot: float = 0.8
    n_pool: int = 4000  # train scenes drawn once
    max_len: int = 192
    seed: int = 0
    cot: str = "lanes"  # CoT trace style (traces.COT_STYLES)
    scenes: str = "v1"  # scene generator set (scenes.SCENE_SETS)

    def lm(self, vocab: int) -> LMConfig:
        return LMConfig(vocab_size=vocab, max_len=self.max_len, **STEER_SIZES[self.size])

    def key(self, vocab: int) -> str:
        sft = asdict(self)
        if sft["cot"] == "lanes":  # the original style: keep the hashes of the checkpoints built before the field
            del sft["cot"]
        else:
            sft["cot_version"] = REL_VERSION
        if sft["scenes"] == "v1":  # the original generator: keep the hashes of the checkpoints built before the field
            del sft["scenes"]
        blob = json.dumps({"sft": sft, "lm": self.lm(vocab).to_dict(), "v": VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass
class SteerSFTResult:
    model: TinyLM
    task: DrivingTask
    path: Path
    cached: bool
    meta: dict[str, Any]


def batch_tensors(
    task: DrivingTask, problems: list[Any], rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    tok = task.tokenizer
    seqs, masks = [], []
    for p in problems:
        pr = task.prompt(p)
        rs = tok.encode(task.solution(p, rng)) + [tok.eos_id]
        seqs.append(pr + rs)
        masks.append([0] * len(pr) + [1] * len(rs))
    t, valid = right_pad(seqs, tok.pad_id)
    m, _ = right_pad(masks, 0)
    return t, m * valid


def train(cfg: SteerSFTConfig, reporter: Any = None, device: str = "cpu") -> tuple[TinyLM, DrivingTask, dict]:
    torch.manual_seed(cfg.seed)
    task = DrivingTask(p_cot=cfg.p_cot, cot=cfg.cot, scenes=cfg.scenes)
    model = TinyLM(cfg.lm(task.tokenizer.vocab_size)).to(device)
    t0 = time.perf_counter()
    pool = task.sample(cfg.n_pool, split_rng(cfg.seed, "train"), "train")
    if reporter is not None:
        reporter.log(f"SFT pool: {len(pool)} scenes in {time.perf_counter() - t0:.1f} s")
    val = task.sample(128, split_rng(cfg.seed + 5, "test"), "test")
    rng = np.random.default_rng(cfg.seed)
    vt, vm = batch_tensors(task, val, np.random.default_rng(1))
    probe, _ = batch_tensors(task, pool[:64], np.random.default_rng(2))
    tok_per_ex = float((probe != task.tokenizer.pad_id).sum()) / 64
    total = max(1, int(cfg.tokens / (tok_per_ex * cfg.batch_size)))
    sched = SFTConfig(lr=cfg.lr)  # the core's warm-up + cosine rule
    opt = AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.1)
    seen, vl, t1 = 0, float("nan"), time.perf_counter()
    model.train()
    for step in range(total):
        opt.param_groups[0]["lr"] = lr_at(step, total, sched)
        idx = rng.integers(0, len(pool), cfg.batch_size)
        tok, mask = batch_tensors(task, [pool[i] for i in idx], rng)
        loss = sft_loss(model, tok.to(device), mask.to(device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        seen += int((tok != task.tokenizer.pad_id).sum())
        last = step == total - 1
        if step % 25 == 0 or last:
            model.eval()
            with torch.no_grad():
                vl = float(sft_loss(model, vt.to(device), vm.to(device)))
            model.train()
            if reporter is not None:
                reporter.scalars(
                    step + 1,
                    {
                        "sft/train_loss": float(loss.detach()),
                        "sft/val_loss": vl,
                        "sft/tokens_per_s": seen / (time.perf_counter() - t1),
                    },
                )
                reporter.progress((step + 1) / total, f"SFT step {step + 1}/{total}, loss {float(loss.detach()):.3f}")
                if reporter.should_stop():
                    break
    model.eval()
    meta = {"steps": step + 1, "tokens": seen, "seconds": time.perf_counter() - t0, "val_loss": vl}
    meta["n_params"] = model.n_params()
    return model, task, meta


def load_or_build(
    cfg: SteerSFTConfig, data_dir: str | Path, reporter: Any = None, device: str = "cpu", force: bool = False
) -> SteerSFTResult:
    """The cached checkpoint for ``cfg``, or train and cache it (atomic write)."""
    vocab = DrivingTask().tokenizer.vocab_size
    path = Path(data_dir) / "steer" / f"sft-{cfg.size}-{cfg.key(vocab)}.pt"
    if path.exists() and not force:
        blob = torch.load(path, map_location=device, weights_only=False)
        model = TinyLM(LMConfig(**blob["lm"])).to(device)
        model.load_state_dict(blob["state_dict"])
        model.eval()
        if reporter is not None:
            reporter.log(f"SFT checkpoint cache hit: {path.name}")
        return SteerSFTResult(
            model, DrivingTask(p_cot=cfg.p_cot, cot=cfg.cot, scenes=cfg.scenes), path, True, blob["meta"]
        )
    if reporter is not None:
        reporter.log(f"building SFT checkpoint {path.name}")
    model, task, meta = train(cfg, reporter, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save({"lm": model.cfg.to_dict(), "sft": asdict(cfg), "meta": meta, "state_dict": model.state_dict()}, tmp)
    os.replace(tmp, path)
    return SteerSFTResult(model, task, path, False, meta)

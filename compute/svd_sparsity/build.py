"""Build step: train the tiny ReGLU causal LM once, with ProSparse-style activation L1, and cache it.

Model: ``compute.core.lm.TinyLM`` with ``ffn="reglu"`` (spec §2: 4 layers, d=256, d_ff=1024, 4 heads, context
256), trained on BBC News + arithmetic traces (``data.py``).  Loss (design choice after ProSparse)::

    L = CE + λ_t · (1/L) Σ_l mean_{tokens,i} ReLU(g_{l,i}),   λ_t = λ_max · clip((t/T − t0) / (1 − t0), 0, 1)

i.e. the L1 norm of the ReLU gate output (ProSparse regularises the activation function's output), ramped from 0
to λ_max over the last ``1 − l1_start`` of training.  ReLU(g) ≥ 0, so mean ReLU(g) is its L1 norm per entry.

The checkpoint (weights, tokenizer JSON, resolved config, token streams of every split) is stored at
``data_dir/svd_sparsity/model-<hash>.pt``; any change to the config rebuilds it (atomic write).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.lm.optim import AdamW
from compute.svd_sparsity import data as D

BUILD_VERSION = "1"


@dataclass
class BuildConfig:
    """One model build (mirrors the ``build_model`` experiment's parameters)."""

    d_model: int = 256
    n_layers: int = 4
    n_heads: int = 4
    d_ff: int = 1024
    context: int = 256
    vocab_size: int = 4096
    steps: int = 320  # optimizer steps (≈ 0.65M training tokens at batch 8)
    batch_size: int = 8  # sequences of `context` tokens per step
    lr: float = 3e-3
    min_lr_ratio: float = 0.1  # cosine floor (nanoGPT's lr/10)
    warmup_steps: int = 30
    weight_decay: float = 0.1
    l1_max: float = 1.0  # λ_max of the activation-L1 term
    l1_start: float = 0.5  # the L1 ramp starts at this fraction of training
    n_arith: int = 4000  # arithmetic training documents mixed into the text
    max_digits: int = 2  # arithmetic operands have 1..max_digits digits
    n_docs: int = 0  # 0 = all 2,225 BBC documents; > 0 = the first n (micro builds for tests)
    seed: int = 0

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> BuildConfig:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in params.items() if k in names})

    def lm_config(self) -> LMConfig:
        return LMConfig(
            vocab_size=self.vocab_size,
            d_model=self.d_model,
            n_layers=self.n_layers,
            n_heads=self.n_heads,
            d_ff=self.d_ff,
            ffn="reglu",
            max_len=self.context,
        )

    def key(self) -> str:
        blob = json.dumps({"cfg": asdict(self), "v": BUILD_VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


@dataclass
class Built:
    """A loaded build: the model, its tokenizer and the token streams of each split."""

    model: TinyLM
    tokenizer: Any  # tokenizers.Tokenizer
    streams: dict[str, torch.Tensor]  # train / cal / heldout / arith_test: int64 [N]
    cfg: BuildConfig
    meta: dict[str, Any]
    path: Path
    cached: bool


def model_path(cfg: BuildConfig, data_dir: str | Path) -> Path:
    return Path(data_dir) / "svd_sparsity" / f"model-{cfg.key()}.pt"


def gate_up(model: TinyLM, layer: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(W_g [d_ff, d], W_u [d_ff, d], W_d [d, d_ff]) views of one block's ReGLU FFN (core stores [W_g; W_u])."""
    ffn = model.blocks[layer].ffn
    d_ff = ffn.down.weight.shape[1]
    w = ffn.up.weight
    return w[:d_ff], w[d_ff:], ffn.down.weight


class GateTap:
    """Forward hooks on every block's ``ffn.up`` (and ``ffn`` input): keep the gate pre-activations g and x."""

    def __init__(self, model: TinyLM, keep_inputs: bool = False) -> None:
        self.g: list[torch.Tensor | None] = [None] * len(model.blocks)
        self.x: list[torch.Tensor | None] = [None] * len(model.blocks)
        self.handles = []
        for i, blk in enumerate(model.blocks):
            d_ff = blk.ffn.down.weight.shape[1]

            def hook(mod, inp, out, i=i, d_ff=d_ff):  # type: ignore[no-untyped-def]
                self.g[i] = out[..., :d_ff]
                if keep_inputs:
                    self.x[i] = inp[0]

            self.handles.append(blk.ffn.up.register_forward_hook(hook))

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def lr_at(step: int, cfg: BuildConfig) -> float:
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    t = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def l1_at(step: int, cfg: BuildConfig) -> float:
    """λ_t: 0 before l1_start·T, then a linear ramp to l1_max at the end."""
    t = step / max(1, cfg.steps - 1)
    return cfg.l1_max * min(1.0, max(0.0, (t - cfg.l1_start) / max(1e-9, 1 - cfg.l1_start)))


def windows(stream: torch.Tensor, n: int, length: int, gen: torch.Generator) -> torch.Tensor:
    """n random windows of ``length`` tokens ([n, length])."""
    starts = torch.randint(0, len(stream) - length, (n,), generator=gen)
    return torch.stack([stream[s : s + length] for s in starts.tolist()])


def eval_windows(stream: torch.Tensor, n_tokens: int, length: int) -> torch.Tensor:
    """Consecutive non-overlapping windows covering the first ~n_tokens of a stream ([n, length])."""
    n = max(1, min(n_tokens, len(stream) - 1) // length)
    return stream[: n * length].view(n, length)


@torch.no_grad()
def natural_sparsity(model: TinyLM, tokens: torch.Tensor, batch: int = 8) -> tuple[list[float], float]:
    """Per-layer fraction of inactive neurons (g ≤ 0) and the CE on ``tokens`` [n, T] (targets = next token)."""
    tap = GateTap(model)
    inactive = np.zeros(len(model.blocks))
    count, ce_sum, ce_n = 0, 0.0, 0
    try:
        for i in range(0, len(tokens), batch):
            tb = tokens[i : i + batch]
            logits = model(tb[:, :-1])
            ce_sum += float(F.cross_entropy(logits.flatten(0, 1), tb[:, 1:].flatten(), reduction="sum"))
            ce_n += tb[:, 1:].numel()
            for l_, g in enumerate(tap.g):
                inactive[l_] += float((g <= 0).float().mean(-1).sum())
            count += tb[:, :-1].numel()
    finally:
        tap.remove()
    return (inactive / max(1, count)).tolist(), ce_sum / max(1, ce_n)


def prepare_data(cfg: BuildConfig) -> tuple[Any, dict[str, np.ndarray]]:
    """Split documents, train the BPE on the training split, encode every split."""
    docs = D.bbc_documents()
    if cfg.n_docs:
        docs = docs[:: max(1, len(docs) // cfg.n_docs)][: cfg.n_docs]
    splits = D.split_documents(docs, cfg.seed)
    arith_train = D.arithmetic_documents(cfg.n_arith, cfg.seed, "train", cfg.max_digits)
    tok = D.train_bpe(splits["train"] + arith_train, cfg.vocab_size)
    train_docs = splits["train"] + arith_train
    order = np.random.default_rng([cfg.seed, 7]).permutation(len(train_docs))  # interleave text and arithmetic
    streams = {
        "train": D.encode_stream(tok, [train_docs[i] for i in order]),
        "cal": D.encode_stream(tok, splits["cal"]),
        "heldout": D.encode_stream(tok, splits["heldout"]),
    }
    return tok, streams


def train_model(cfg: BuildConfig, reporter: Any = None) -> Built:
    """Train from scratch; streams ``train/*`` and ``sparsity/*`` series when a reporter is given."""
    torch.manual_seed(cfg.seed)
    t0 = time.perf_counter()
    tok, np_streams = prepare_data(cfg)
    streams = {k: torch.from_numpy(v.astype(np.int64)) for k, v in np_streams.items()}
    lm_cfg = cfg.lm_config()
    lm_cfg.vocab_size = tok.get_vocab_size()
    model = TinyLM(lm_cfg)
    if reporter is not None:
        reporter.log(
            f"data: {', '.join(f'{k} {len(v):,} tokens' for k, v in streams.items())}; vocab {lm_cfg.vocab_size}; "
            f"{model.n_params():,} non-embedding parameters"
        )
    opt = AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=cfg.weight_decay)
    gen = torch.Generator().manual_seed(cfg.seed)
    val = eval_windows(streams["heldout"], 16 * cfg.context, cfg.context + 1)
    tap = GateTap(model)
    every = max(1, cfg.steps // 30)
    history: list[dict[str, float]] = []  # the train/* points, kept in the checkpoint for cache hits
    step = 0
    try:
        for step in range(cfg.steps):
            lr, lam = lr_at(step, cfg), l1_at(step, cfg)
            opt.param_groups[0]["lr"] = lr
            xb = windows(streams["train"], cfg.batch_size, cfg.context + 1, gen)
            logits = model(xb[:, :-1])
            ce = F.cross_entropy(logits.flatten(0, 1), xb[:, 1:].flatten())
            l1 = torch.stack([F.relu(g).mean() for g in tap.g]).mean()  # (1/L) Σ_l mean ReLU(g_l)
            loss = ce + lam * l1 if lam > 0 else ce
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if step % every == 0 or step == cfg.steps - 1:
                with torch.no_grad():
                    act = float(np.mean([float((g > 0).float().mean()) for g in tap.g]))
                point = {
                    "train/ce": float(ce.detach()),
                    "train/l1": float(l1.detach()),
                    "train/lambda": lam,
                    "train/active": act,
                }
                history.append({"step": step, **point})
                if reporter is not None:
                    reporter.scalars(step, point)
                    reporter.progress(
                        (step + 1) / cfg.steps, f"step {step + 1}/{cfg.steps}, CE {point['train/ce']:.3f}"
                    )
                    if reporter.should_stop():
                        break
    finally:
        tap.remove()
    model.eval()
    sp, val_ce = natural_sparsity(model, val)
    meta = {
        "steps": step + 1,
        "seconds": time.perf_counter() - t0,
        "heldout_ce": val_ce,
        "heldout_ppl": math.exp(val_ce),
        "natural_sparsity": sp,
        "n_params": model.n_params(),
        "vocab_size": lm_cfg.vocab_size,
        "tokens": {k: len(v) for k, v in streams.items()},
        "history": history,
    }
    return Built(model, tok, streams, cfg, meta, Path(), False)


def load_or_build(cfg: BuildConfig, data_dir: str | Path, reporter: Any = None, force: bool = False) -> Built:
    """The cached build for ``cfg``, or train and cache it (atomic write)."""
    from compute.svd_sparsity.data import load_bpe

    path = model_path(cfg, data_dir)
    if path.exists() and not force:
        blob = torch.load(path, map_location="cpu", weights_only=False)
        model = TinyLM(LMConfig(**blob["lm"]))
        model.load_state_dict(blob["state_dict"])
        model.eval()
        streams = {k: torch.from_numpy(v.astype(np.int64)) for k, v in blob["streams"].items()}
        if reporter is not None:
            reporter.log(f"model cache hit: {path.name}")
        return Built(model, load_bpe(blob["tokenizer"]), streams, cfg, blob["meta"], path, True)
    if reporter is not None:
        reporter.log(f"building {path.name} (one-time)")
    built = train_model(cfg, reporter)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save(
        {
            "lm": built.model.cfg.to_dict(),
            "build": asdict(cfg),
            "version": BUILD_VERSION,
            "meta": built.meta,
            "tokenizer": built.tokenizer.to_str(),
            "streams": {k: v.numpy().astype(np.int32) for k, v in built.streams.items()},
            "state_dict": built.model.state_dict(),
        },
        tmp,
    )
    os.replace(tmp, path)
    built.path = path
    return built

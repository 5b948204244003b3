"""The tagger: the tiny causal LM read out at the last prompt position over the intent-label tokens.

Its "classification head" is the tied output embedding restricted to the label tokens, so tagging is exactly
one next-token step of an LLM.  Trained once on **original-order** prompts (a declared build step) with
cross-entropy on the rule label; design choice for the ``foreign+note`` variant: a share of training prompts
carries foreign records plus an ``<ignore> …`` note listing them, labelled without them.

The checkpoint is keyed by a hash of its config and cached at ``data_dir/prefixshakeup/tagger-<hash>.pt``.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.lm.optim import AdamW
from compute.core.lm.sampling import left_pad

from .workload import LABEL_IDS, VOCAB, Formed, WorkloadConfig, generate, prompt_tokens, rule_label

VERSION = "1"
MODEL_SIZES = {  # d_model, n_layers, n_heads, d_ff
    "micro": (32, 1, 2, 64),  # tests
    "small": (64, 2, 2, 256),  # CPU default tagger (trains in minutes on 2 cores)
    "medium": (128, 4, 4, 512),
    "spec": (256, 4, 4, 1024),  # the spec's 4-layer d = 256 model
}


@dataclass
class TaggerConfig:
    size: str = "small"
    steps: int = 600
    batch_size: int = 32
    lr: float = 5e-3
    records_mean: int = 24  # training prompts: records in [mean/3, 8·mean/3]
    note_frac: float = 0.25  # share of training prompts with foreign records + <ignore> note
    omega: float = 1.0
    label_window: int = 10
    seed: int = 0

    def lm(self) -> LMConfig:
        d, n_l, n_h, ff = MODEL_SIZES[self.size]
        return LMConfig(vocab_size=len(VOCAB), d_model=d, n_layers=n_l, n_heads=n_h, d_ff=ff, max_len=2048)

    def key(self) -> str:
        blob = json.dumps({"cfg": asdict(self), "v": VERSION, "vocab": VOCAB}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _batch(cfg: TaggerConfig, rng: np.random.Generator, n: int) -> tuple[list[list[int]], list[int]]:
    """n original-order training prompts from a fresh workload (new templates and communities each call)."""
    wcfg = WorkloadConfig(
        users=n,
        records_mean=cfg.records_mean,
        records_min=max(5, cfg.records_mean // 3),
        records_max=cfg.records_mean * 8 // 3,
        omega=cfg.omega,
        label_window=cfg.label_window,
        seed=int(rng.integers(1 << 31)),
    )
    wl = generate(wcfg)
    prompts, labels = [], []
    for u, recs in enumerate(wl.records):
        f = Formed(list(recs))
        if rng.random() < cfg.note_frac:
            have = set(recs)
            k = int(rng.integers(1, 5))
            extra = [int(r) for r in rng.choice(wl.cfg.templates, size=k + 8, replace=False) if r not in have][:k]
            older = len(recs) - cfg.label_window
            for r in extra:
                f.order.insert(int(rng.integers(0, max(1, older))), r)
            f.foreign, f.note = extra, True
        prompts.append(prompt_tokens(wl, f))
        labels.append(int(wl.labels[u]))
    return prompts, labels


def label_logits(model: TinyLM, prompts: list[list[int]]) -> torch.Tensor:
    tok, mask = left_pad(prompts, 0, model.device)
    return model(tok.to(model.device), valid=mask.to(model.device))[:, -1, torch.as_tensor(LABEL_IDS)]


def train(cfg: TaggerConfig, device: str = "cpu", log: Any = None) -> tuple[TinyLM, dict[str, Any]]:
    """AdamW with linear warm-up then cosine decay; returns the model and a small training record."""
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    model = TinyLM(cfg.lm()).to(device)
    opt = AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    t0 = time.perf_counter()
    hist = []
    for step in range(cfg.steps):
        lr = cfg.lr * min(1.0, (step + 1) / max(1, cfg.steps // 20))
        lr *= 0.55 + 0.45 * np.cos(np.pi * step / cfg.steps)
        opt.param_groups[0]["lr"] = lr
        prompts, labels = _batch(cfg, rng, cfg.batch_size)
        loss = F.cross_entropy(label_logits(model, prompts), torch.as_tensor(labels, device=device))
        model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        hist.append(float(loss))
        if log is not None:
            log(step, float(loss))
    model.eval()
    prompts, labels = _batch(cfg, np.random.default_rng(cfg.seed + 1), 128)
    with torch.inference_mode():
        acc = float((label_logits(model, prompts).argmax(-1).cpu().numpy() == np.array(labels)).mean())
    return model, {"loss": hist, "val_acc": acc, "seconds": time.perf_counter() - t0}


def load_or_build(
    cfg: TaggerConfig, data_dir: Path | str, reporter: Any = None, device: str = "cpu"
) -> tuple[TinyLM, dict]:
    """The cached tagger, trained first if absent (the declared build step)."""
    path = Path(data_dir) / "prefixshakeup" / f"tagger-{cfg.key()}.pt"
    if path.exists():
        blob = torch.load(path, map_location=device, weights_only=False)
        model = TinyLM(LMConfig(**blob["lm"])).to(device)
        model.load_state_dict(blob["state"])
        return model.eval(), {**blob["meta"], "cached": True, "path": str(path)}

    def log(step: int, loss: float) -> None:
        if reporter is not None and (step % 10 == 0 or step == cfg.steps - 1):
            reporter.scalar("tagger/loss", step, loss)
            reporter.progress(step / cfg.steps, f"tagger build: step {step}/{cfg.steps}, loss {loss:.3f}")

    model, rec = train(cfg, device, log)
    meta = {"val_acc": rec["val_acc"], "seconds": rec["seconds"], "config": asdict(cfg)}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"lm": model.cfg.to_dict(), "state": model.state_dict(), "meta": meta}, tmp)
    tmp.replace(path)
    return model, {**meta, "cached": False, "path": str(path)}


__all__ = ["MODEL_SIZES", "TaggerConfig", "label_logits", "load_or_build", "rule_label", "train"]

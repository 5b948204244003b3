"""The tagger: the tiny causal LM plus a linear classification head on the last prompt position.

score = W·RMSNorm(h_L[last]) + b over the 8 intent labels (one output step, like a single label token).
Trained once on **original-order** prompts (a declared build step), in two phases (design choice: from a
small init the LM sits on a plateau for hundreds of CPU steps):
  1. probe: the head is fitted by L2-regularized multinomial logistic regression (L-BFGS) on the frozen
     randomly initialised LM's last-position features;
  2. fine-tune: all weights, AdamW, cross-entropy on the rule label — this is where order sensitivity
     (the up-weighted last records) can be learned.
Design choice for the ``foreign+note`` variant: a share of training prompts carries foreign records plus an
``<ignore> …`` note listing them, labelled without them.

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
    steps: int = 0  # fine-tuning steps after the probe (0 = probe only: fine-tuning lost accuracy, see docs)
    batch_size: int = 32
    lr: float = 1e-3
    records_mean: int = 24  # training prompts: records in [mean/3, 8·mean/3]
    note_frac: float = 0.25
    probe_prompts: int = 4096  # phase 1: prompts whose frozen features fit the head
    probe_l2: float = 1e-3
    lm_lr_scale: float = 0.05  # LM learning rate = lr × this during fine-tuning  # share of training prompts with foreign records + <ignore> note
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


def features(model: TinyLM, tok: torch.Tensor, valid: torch.Tensor | None = None, **kw: Any) -> torch.Tensor:
    """RMSNorm(h_L) at the last position [B, d] (``kw`` passes positions / cache to the LM)."""
    _, hidden = model(tok, valid=valid, return_hidden=True, **kw)
    return model.ln_f(hidden[-1][:, -1])


def label_logits(model: TinyLM, prompts: list[list[int]], head: torch.nn.Linear | None = None) -> torch.Tensor:
    """[B, 8] label scores: the head on the last features, or (no head) the LM logits of the label tokens."""
    tok, mask = left_pad(prompts, 0, model.device)
    tok, mask = tok.to(model.device), mask.to(model.device)
    if head is None:
        return model(tok, valid=mask)[:, -1, torch.as_tensor(LABEL_IDS, device=model.device)]
    return head(features(model, tok, mask))


def _probe(model: TinyLM, cfg: TaggerConfig, rng: np.random.Generator, log: Any) -> torch.nn.Linear:
    """Phase 1: logistic-regression head on frozen features (standardisation folded into W, b)."""
    feats, labs = [], []
    with torch.inference_mode():
        for i in range(cfg.probe_prompts // 64):
            pr, lab = _batch(cfg, rng, 64)
            tok, mask = left_pad(pr, 0, model.device)
            feats.append(features(model, tok.to(model.device), mask.to(model.device)).float())
            labs += lab
            if log is not None:
                log(-1, float("nan"), f"probe features {64 * (i + 1)}/{cfg.probe_prompts}")
    X, y = torch.cat(feats), torch.as_tensor(labs, device=model.device)
    mu, sd = X.mean(0), X.std(0) + 1e-6
    Z = (X - mu) / sd
    W = torch.zeros(X.shape[1], len(LABEL_IDS), device=X.device, requires_grad=True)
    b = torch.zeros(len(LABEL_IDS), device=X.device, requires_grad=True)
    opt = torch.optim.LBFGS([W, b], max_iter=200, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = F.cross_entropy(Z @ W + b, y) + cfg.probe_l2 * (W**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    head = torch.nn.Linear(X.shape[1], len(LABEL_IDS)).to(model.device)
    with torch.no_grad():
        head.weight.copy_((W / sd[:, None]).T)
        head.bias.copy_(b - (mu / sd) @ W)
    return head


def train(cfg: TaggerConfig, device: str = "cpu", log: Any = None) -> tuple[TinyLM, torch.nn.Linear, dict[str, Any]]:
    """Probe, then AdamW fine-tuning (warm-up, cosine decay); returns the LM, the head and a training record."""
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    model = TinyLM(cfg.lm()).to(device)
    t0 = time.perf_counter()
    head = _probe(model, cfg, rng, log)
    val_prompts, val_labels = _batch(
        cfg, np.random.default_rng(cfg.seed + 1), max(32, min(256, cfg.probe_prompts // 4))
    )

    def val_acc() -> float:
        with torch.inference_mode():
            pred = label_logits(model, val_prompts, head).argmax(-1).cpu().numpy()
        return float((pred == np.array(val_labels)).mean())

    acc_probe = val_acc()
    params = list(model.parameters()) + list(head.parameters())
    # the probe's head amplifies small feature changes (features vary little across prompts), so the LM moves
    # with a much smaller learning rate than the head (design choice; one AdamW per group)
    opt_lm = AdamW(model.parameters(), lr=cfg.lr * cfg.lm_lr_scale, weight_decay=0.01)
    opt_head = AdamW(head.parameters(), lr=cfg.lr, weight_decay=0.0)
    hist = []
    for step in range(cfg.steps):
        scale = min(1.0, (step + 1) / max(1, cfg.steps // 20)) * (0.55 + 0.45 * np.cos(np.pi * step / cfg.steps))
        opt_lm.param_groups[0]["lr"] = cfg.lr * cfg.lm_lr_scale * scale
        opt_head.param_groups[0]["lr"] = cfg.lr * scale
        prompts, labels = _batch(cfg, rng, cfg.batch_size)
        model.train()
        loss = F.cross_entropy(label_logits(model, prompts, head), torch.as_tensor(labels, device=device))
        model.zero_grad(set_to_none=True)
        head.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt_lm.step()
        opt_head.step()
        hist.append(float(loss))
        if log is not None:
            log(step, float(loss), "")
    model.eval()
    return (
        model,
        head,
        {
            "loss": hist,
            "val_acc_probe": acc_probe,
            "val_acc": val_acc(),
            "seconds": time.perf_counter() - t0,
        },
    )


def load_or_build(
    cfg: TaggerConfig, data_dir: Path | str, reporter: Any = None, device: str = "cpu"
) -> tuple[TinyLM, torch.nn.Linear, dict]:
    """The cached tagger (LM, head, meta), trained first if absent (the declared build step)."""
    path = Path(data_dir) / "prefixshakeup" / f"tagger-{cfg.key()}.pt"
    if path.exists():
        blob = torch.load(path, map_location=device, weights_only=False)
        model = TinyLM(LMConfig(**blob["lm"])).to(device)
        model.load_state_dict(blob["state"])
        head = torch.nn.Linear(model.cfg.d_model, len(LABEL_IDS)).to(device)
        head.load_state_dict(blob["head"])
        return model.eval(), head, {**blob["meta"], "cached": True, "path": str(path)}

    def log(step: int, loss: float, msg: str) -> None:
        if reporter is None:
            return
        if step < 0:
            reporter.progress(0.0, f"tagger build: {msg}")
        elif step % 10 == 0 or step == cfg.steps - 1:
            reporter.scalar("tagger/loss", step, loss)
            reporter.progress(step / max(1, cfg.steps), f"tagger build: step {step}/{cfg.steps}, loss {loss:.3f}")

    model, head, rec = train(cfg, device, log)
    meta = {
        "val_acc": rec["val_acc"],
        "val_acc_probe": rec["val_acc_probe"],
        "seconds": rec["seconds"],
        "config": asdict(cfg),
    }
    if reporter is not None and not rec["loss"]:
        reporter.scalar("tagger/loss", 0, float("nan"))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    blob = {"lm": model.cfg.to_dict(), "state": model.state_dict(), "head": head.state_dict(), "meta": meta}
    torch.save(blob, tmp)
    tmp.replace(path)
    return model, head, {**meta, "cached": False, "path": str(path)}


__all__ = ["MODEL_SIZES", "TaggerConfig", "label_logits", "load_or_build", "rule_label", "train"]

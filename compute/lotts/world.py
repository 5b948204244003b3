"""The build step: train the toy T2I denoiser and both verifiers once; cache them under the data directory."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .config import WorldConfig
from .data import caption_tokens, sample_batch
from .diffusion import T_TRAIN, alphas_cumprod
from .model import CountingUNet, TinyUNet, UNetConfig
from .verifiers import HeldoutNet, SelectNet, train_verifier

Progress = Callable[[float, str], None]


@dataclass
class World:
    cfg: WorldConfig
    net: CountingUNet  # EMA weights, eval mode, NFE counter
    select: SelectNet
    heldout: HeldoutNet
    history: dict  # training curves and timings
    cached: bool = False


def unet_config(cfg: WorldConfig) -> UNetConfig:
    w = cfg.width
    return UNetConfig(size=cfg.size, channels=(w, 2 * w, 2 * w), ctx_dim=max(32, 2 * w), prediction=cfg.prediction)


def train_denoiser(cfg: WorldConfig, progress: Progress | None = None) -> tuple[TinyUNet, dict]:
    """v-prediction MSE (ε-prediction if configured), t ~ U{0..T−1}, AdamW with warm-up + cosine decay, EMA of the weights."""
    rng = np.random.default_rng([cfg.world_seed, 11])
    torch.manual_seed(cfg.world_seed)
    data = sample_batch(cfg.n_train, cfg.size, rng, cfg.p_def)
    x_all = torch.as_tensor(data.images)
    net = TinyUNet(unet_config(cfg))
    ema = copy.deepcopy(net).requires_grad_(False)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=0.0)
    warm = max(1, cfg.train_steps // 20)

    def lr_at(s: int) -> float:
        if s < warm:
            return cfg.lr * (s + 1) / warm
        return cfg.lr * 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, cfg.train_steps - warm)))

    ac = alphas_cumprod()
    losses, t_start = [], time.perf_counter()
    for step in range(cfg.train_steps):
        idx = rng.integers(0, cfg.n_train, cfg.batch)
        sub = type(data)(data.images[idx], data.masks[idx], data.defective[idx], [data.attrs[i] for i in idx], [])
        ids = torch.as_tensor(caption_tokens(sub, rng, cfg.p_drop_quality, cfg.p_drop_caption))
        x0 = x_all[idx]
        t = torch.as_tensor(rng.integers(0, T_TRAIN, cfg.batch))
        eps = torch.randn_like(x0)
        a = ac[t][:, None, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        target = eps if net.cfg.prediction == "eps" else a.sqrt() * eps - (1 - a).sqrt() * x0  # v-prediction
        loss = F.mse_loss(net(xt, t, ids), target)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            d = min(cfg.ema, (1 + step) / (10 + step))
            for pe, p in zip(ema.parameters(), net.parameters(), strict=True):
                pe.mul_(d).add_(p.detach(), alpha=1 - d)
        losses.append(loss.item())
        if progress is not None and (step % 50 == 0 or step == cfg.train_steps - 1):
            progress(
                step / cfg.train_steps, f"denoiser step {step}/{cfg.train_steps}, loss {np.mean(losses[-50:]):.4f}"
            )
    return ema.eval(), {"loss": losses, "denoiser_seconds": time.perf_counter() - t_start}


def _path(cfg: WorldConfig, cache_dir: Path) -> Path:
    return Path(cache_dir) / f"world-s{cfg.size}-w{cfg.width}-{cfg.key()}.pt"


def build_world(cfg: WorldConfig, cache_dir: Path, progress: Progress | None = None, force: bool = False) -> World:
    """Load the cached world for ``cfg`` or train it (denoiser, selection verifier, held-out evaluator)."""
    cfg = cfg.world()
    path = _path(cfg, cache_dir)
    if path.exists() and not force:
        blob = torch.load(path, map_location="cpu", weights_only=False)
        return _from_blob(cfg, blob, cached=True)

    def sub(lo: float, hi: float) -> Progress | None:
        return None if progress is None else (lambda f, m: progress(lo + (hi - lo) * f, m))

    unet, hist = train_denoiser(cfg, sub(0.0, 0.8))
    t1 = time.perf_counter()
    sel_p, held_p = sub(0.8, 0.9), sub(0.9, 1.0)
    n = max(1, cfg.verifier_steps)
    select = train_verifier(
        SelectNet(),
        cfg.size,
        cfg.verifier_steps,
        cfg.world_seed + 101,
        progress=sel_p and (lambda s, loss: sel_p(s / n, f"selection verifier step {s}, loss {loss:.3f}")),
    )
    heldout = train_verifier(
        HeldoutNet(),
        cfg.size,
        cfg.verifier_steps,
        cfg.world_seed + 202,
        progress=held_p and (lambda s, loss: held_p(s / n, f"held-out evaluator step {s}, loss {loss:.3f}")),
    )
    hist["verifier_seconds"] = time.perf_counter() - t1
    blob = {
        "world": asdict(cfg),
        "unet_cfg": unet_config(cfg).to_dict(),
        "unet": unet.state_dict(),
        "select": select.state_dict(),
        "heldout": heldout.state_dict(),
        "history": hist,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(blob, tmp)
    tmp.replace(path)
    return _from_blob(cfg, blob, cached=False)


def _from_blob(cfg: WorldConfig, blob: dict, cached: bool) -> World:
    ucfg = UNetConfig(**{**blob["unet_cfg"], "channels": tuple(blob["unet_cfg"]["channels"])})
    unet = TinyUNet(ucfg)
    unet.load_state_dict(blob["unet"])
    select, heldout = SelectNet(), HeldoutNet()
    dummy = torch.zeros(1, 3, cfg.size, cfg.size)
    select(dummy), heldout(dummy)  # materialize lazy layers before loading
    select.load_state_dict(blob["select"])
    heldout.load_state_dict(blob["heldout"])
    for m in (unet, select, heldout):
        m.eval().requires_grad_(False)
    return World(cfg, CountingUNet(unet), select, heldout, blob["history"], cached)

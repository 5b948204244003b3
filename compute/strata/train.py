"""Data cache, day splits and tile training (paper §3: train on random local tiles, one-step increments).

Loss: one-step MSE on normalised increments, target = (x̃_{t+1} − x̃_t)/σ_Δ with x̃ = (x − μ)/σ per variable.
AdamW, lr 1e-3, cosine schedule (design); optional multi-step fine-tuning (unroll > 1) in the last 20% of steps.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from .config import DataParams, TrainParams
from .data import CHANNELS, Dataset, generate
from .model import TileModel, n_params
from .tiles import sample_tiles


def _key(obj: dict) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:12]


def data_key(p: DataParams) -> str:
    return "data_" + _key(asdict(p.generator()))


def load_or_generate(p: DataParams, cache: Path | None, progress: Callable | None = None) -> tuple[Dataset, dict, bool]:
    """The build step: generate the moist world once and cache it as npz under ``cache``; returns (ds, diag, hit)."""
    path = cache / f"{data_key(p)}.npz" if cache is not None else None
    if path is not None and path.exists():
        z = np.load(path, allow_pickle=False)
        ds = Dataset(
            **{k: z[k] for k in ("frames", "lats", "lons", "mean", "std", "dstd")},
            solver_seconds_per_day=float(z["solver_seconds_per_day"]),
            frame_minutes=float(z["frame_minutes"]),
        )
        return ds, json.loads(str(z["diag"])), True
    ds, diag = generate(p.generator(), progress)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(
            tmp,
            **{k: getattr(ds, k) for k in ("frames", "lats", "lons", "mean", "std", "dstd")},
            solver_seconds_per_day=ds.solver_seconds_per_day,
            frame_minutes=ds.frame_minutes,
            diag=json.dumps(diag),
        )
        tmp.replace(path)
    return ds, diag, False


def splits(n_frames: int, frames_per_day: float) -> tuple[range, range, range]:
    """Paper split scaled: test = last max(2/17 of the data, 1 day), validation = previous 1/17 (≥ 6 frames)."""
    n_test = min(n_frames // 2, max(round(n_frames * 2 / 17), int(frames_per_day) + 1))
    n_val = max(6, round(n_frames / 17))
    n_train = n_frames - n_test - n_val
    return range(0, n_train), range(n_train, n_train + n_val), range(n_train + n_val, n_frames)


def normalise(ds: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """x̃ = (x − μ)/σ per variable (float32) and the increment scale σ_Δ/σ per variable."""
    xn = ((ds.frames - ds.mean[None, :, None, None, None]) / ds.std[None, :, None, None, None]).astype(np.float32)
    return xn, (ds.dstd / ds.std).astype(np.float32)


@torch.no_grad()
def one_step_rmse(
    model: TileModel, xn: np.ndarray, inc: np.ndarray, ds: Dataset, idx: np.ndarray, tile: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, float]:
    """Per-variable RMSE (physical units) of the model and of persistence on random tiles; plus normalised loss."""
    x, y, la, lo = sample_tiles(xn, ds.lats, ds.lons, idx, tile, rng)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    pred = model(xt, torch.from_numpy(la), torch.from_numpy(lo))
    target = (yt - xt) / torch.from_numpy(inc)[None, :, None, None, None]
    loss = float((pred - target).pow(2).mean())
    err = (pred * torch.from_numpy(inc)[None, :, None, None, None] - (yt - xt)).numpy()
    sq = np.sqrt((err**2).mean(axis=(0, 2, 3, 4))) * ds.std
    pers = np.sqrt(((y - x) ** 2).mean(axis=(0, 2, 3, 4))) * ds.std
    return sq, pers, loss


def train(
    p: TrainParams,
    ds: Dataset,
    report: Callable[[int, dict], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[TileModel, dict]:
    """Train a tile model; ``report(step, metrics)`` is called every few steps with loss curves."""
    torch.manual_seed(p.seed)
    rng = np.random.default_rng(p.seed)
    xn, inc = normalise(ds)
    fpd = 1440.0 / ds.frame_minutes
    tr, va, _ = splits(len(xn), fpd)
    model = TileModel(p.model())
    opt = torch.optim.AdamW(model.parameters(), lr=p.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, p.steps) / p.steps)))
    inc_t = torch.from_numpy(inc)[None, :, None, None, None]
    every = max(1, p.steps // 30)
    t0 = time.perf_counter()
    hist: dict = {"train": [], "val": []}
    unroll_from = int(0.8 * p.steps) if p.unroll > 1 else p.steps + 1
    for step in range(1, p.steps + 1):
        k = p.unroll if step >= unroll_from else 1
        idx = rng.integers(tr.start, tr.stop - k, size=p.batch)
        # tiles of k+1 consecutive frames at one location
        seq = [
            sample_tiles(xn, ds.lats, ds.lons, idx + j, p.tile, np.random.default_rng(step * 7919 + p.seed))
            for j in range(k)
        ]
        x = torch.from_numpy(seq[0][0])
        la, lo = torch.from_numpy(seq[0][2]), torch.from_numpy(seq[0][3])
        loss = torch.zeros(())
        for j in range(k):
            y = torch.from_numpy(seq[j][1])
            pred = model(x, la, lo)
            loss = loss + (pred - (y - x) / inc_t).pow(2).mean() / k
            x = x + pred * inc_t  # unrolled state (backprop through the chain)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        hist["train"].append(float(loss.detach()))
        if report is not None and (step % every == 0 or step == p.steps):
            model.eval()
            vidx = np.random.default_rng(12345).integers(va.start, va.stop - 1, size=16)
            rm, pe, vloss = one_step_rmse(model, xn, inc, ds, vidx, p.tile, np.random.default_rng(1))
            model.train()
            hist["val"].append((step, vloss))
            report(
                step,
                {
                    "loss/train": float(np.mean(hist["train"][-every:])),
                    "loss/val": vloss,
                    **{f"skill/{c}": float(rm[i] / pe[i]) for i, c in enumerate(CHANNELS)},
                    "time/s": time.perf_counter() - t0,
                },
            )
        if should_stop is not None and should_stop():
            break
    model.eval()
    info = {"params": n_params(model), "train_seconds": time.perf_counter() - t0, "steps": step}
    return model, info


def load_or_train(p: TrainParams, ds: Dataset, cache: Path | None, report=None, should_stop=None):
    """Checkpoint cache keyed by (data, model, training) config; the checkpoint stores its config."""
    train_fields = {f: getattr(p, f) for f in TrainParams.__dataclass_fields__}  # rollout-only fields excluded
    path = cache / f"model_{_key(train_fields)}.pt" if cache is not None else None
    if path is not None and path.exists():
        blob = torch.load(path, weights_only=False)
        model = TileModel(p.model())
        model.load_state_dict(blob["state"])
        model.eval()
        return model, blob["info"], True
    model, info = train(p, ds, report, should_stop)
    if path is not None and info["steps"] == p.steps:
        path.parent.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        torch.save({"state": model.state_dict(), "info": info, "config": train_fields}, buf)
        path.write_bytes(buf.getvalue())
    return model, info, False

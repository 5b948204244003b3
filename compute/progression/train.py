"""Training loops: the STEP encoder (and the AE / SoftCLT-like encoders sharing its architecture), the
downstream heads (linear, Tr on a context of latent states) and the supervised MS-DCNN-like baseline."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from compute.core.reporter import Reporter

from .config import StepConfig
from .model import StepModel, TripletSampler, make_groups, proto_loss, proto_masks, soft_temporal_loss, triplet_loss
from .preprocess import Windows


def _adamw(params: Any, lr: float) -> torch.optim.Optimizer:
    return torch.optim.AdamW(params, lr=lr, weight_decay=0.01, betas=(0.9, 0.98))


def train_encoder(
    W: Windows,
    cfg: StepConfig,
    reporter: Reporter | None = None,
    kind: str = "step",
    prefix: str = "loss",
    on_epoch: Callable[[int, StepModel], None] | None = None,
    progress: tuple[float, float] = (0.0, 1.0),
) -> tuple[StepModel, list[dict[str, float]]]:
    """Train a window encoder on the training windows ``W``.

    kind = "step": MSE recon + alpha * Triplet + beta_t * Proto (released STEP);
    kind = "ae": reconstruction only; kind = "softclt": soft temporal contrastive loss only (two jittered views).
    Reports ``{prefix}/recon``, ``/triplet``, ``/proto``, ``/beta_t`` (or ``/softclt``) once per epoch.
    """
    dev = cfg.device
    rng = np.random.default_rng(cfg.seed + {"step": 0, "ae": 1, "softclt": 2}[kind])
    torch.manual_seed(cfg.seed + {"step": 0, "ae": 1, "softclt": 2}[kind])
    model = StepModel(W.X.shape[1], W.X.shape[2], cfg).to(dev)
    opt = _adamw(model.parameters(), cfg.lr)
    X = torch.from_numpy(W.X).to(dev)
    n = len(X)
    group, key, margin = make_groups(W.rul, W.life, cfg.grouping)
    sampler = TripletSampler(W.unit, group, key, margin)
    is_start, is_end = proto_masks(W.start, n)
    is_start_t, is_end_t = torch.from_numpy(is_start).to(dev), torch.from_numpy(is_end).to(dev)
    t_cycle = torch.from_numpy(W.t.astype(np.float32)).to(dev)
    steps = max(1, n // cfg.batch_size)
    history: list[dict[str, float]] = []
    p0, p1 = progress
    for epoch in range(cfg.epochs):
        model.train()
        beta_t = cfg.beta_at(epoch)
        sums = {"recon": 0.0, "triplet": 0.0, "proto": 0.0, "softclt": 0.0}
        perm = rng.permutation(n)
        for s in range(steps):
            if kind == "softclt":
                loss = _softclt_step(model, X, W, t_cycle, cfg, rng)
                sums["softclt"] += float(loss.detach())
            else:
                a = perm[s * cfg.batch_size : (s + 1) * cfg.batch_size]
                xa = X[a]
                za, xhat = model(xa)
                recon = ((xhat - xa) ** 2).mean()
                loss = recon
                sums["recon"] += float(recon.detach())
                if kind == "step":
                    pos, neg = sampler.sample(a, rng)
                    zpn = model.encoder(X[np.concatenate([pos, neg])])
                    trip = triplet_loss(za, zpn[: len(a)], zpn[len(a) :])
                    a_t = torch.from_numpy(a).to(dev)
                    proto = proto_loss(za, is_start_t[a_t], is_end_t[a_t], model.e1, model.e2)
                    loss = recon + cfg.alpha * trip + beta_t * proto
                    sums["triplet"] += float(trip.detach())
                    sums["proto"] += float(proto.detach())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        row = {k: v / steps for k, v in sums.items()}
        row["beta_t"] = beta_t
        history.append(row)
        if reporter is not None:
            if kind == "step":
                reporter.scalars(epoch + 1, {f"{prefix}/{k}": row[k] for k in ("recon", "triplet", "proto", "beta_t")})
            else:
                reporter.scalar(f"{prefix}/{kind}", epoch + 1, row["softclt" if kind == "softclt" else "recon"])
            reporter.progress(p0 + (p1 - p0) * (epoch + 1) / cfg.epochs, f"{kind}: epoch {epoch + 1}/{cfg.epochs}")
        if on_epoch is not None:
            on_epoch(epoch, model)
        if reporter is not None and reporter.should_stop():
            break
    model.eval()
    return model, history


def _softclt_step(
    model: StepModel,
    X: torch.Tensor,
    W: Windows,
    t_cycle: torch.Tensor,
    cfg: StepConfig,
    rng: np.random.Generator,
    n_units: int = 16,
    per_unit: int = 16,
) -> torch.Tensor:
    """One SoftCLT-like step: ``n_units`` units x ``per_unit`` windows, two views (Gaussian jitter 0.01)."""
    units = rng.choice(W.n_units, size=min(n_units, W.n_units), replace=False)
    idx = np.concatenate([W.start[u] + rng.integers(W.start[u + 1] - W.start[u], size=per_unit) for u in units])
    x = X[idx]
    views = torch.cat([x + 0.01 * torch.randn_like(x), x + 0.01 * torch.randn_like(x)])
    z = nn.functional.normalize(model.encoder(views), dim=-1)  # (2 n per_unit, d)
    k = len(idx)
    t = t_cycle[idx]
    losses = []
    for j in range(len(units)):
        sl = slice(j * per_unit, (j + 1) * per_unit)
        zz = torch.cat([z[:k][sl], z[k:][sl]])
        tt = torch.cat([t[sl], t[sl]])
        losses.append(soft_temporal_loss(zz / 0.5, tt, cfg.softclt_tau))  # temperature 0.5 on unit vectors
    return torch.stack(losses).mean()


# ------------------------------------------------------------------------------------------------
# downstream heads
# ------------------------------------------------------------------------------------------------
def fit_linear(F: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares y ~ [F, 1] w; returns w (design: ordinary least squares, no regularisation)."""
    A = np.c_[F, np.ones(len(F))]
    return np.linalg.lstsq(A, y, rcond=None)[0]


def predict_linear(w: np.ndarray, F: np.ndarray) -> np.ndarray:
    return np.c_[F, np.ones(len(F))] @ w


def context_index(W: Windows, context: int) -> np.ndarray:
    """(N, context) indices of the last ``context`` windows of the same unit ending at each window;
    left-padded by repeating the unit's first window (design choice for short test units)."""
    n = len(W.unit)
    idx = np.arange(n)[:, None] + np.arange(-context + 1, 1)[None, :]
    first = W.start[W.unit]
    return np.maximum(idx, first[:, None])


class TrHead(nn.Module):
    """Tr-STEP regressor (design choice): 2-layer transformer (d = 32) over a context of latent states -> RUL."""

    def __init__(self, in_dim: int, context: int, d_model: int = 32) -> None:
        super().__init__()
        self.inp = nn.Linear(in_dim, d_model)
        self.pos = nn.Parameter(torch.randn(1, context, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(
            d_model, 4, dim_feedforward=64, dropout=0.0, activation="gelu", batch_first=True
        )
        self.transformer = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.out = nn.Linear(d_model, 1)

    def forward(self, s: torch.Tensor) -> torch.Tensor:  # (B, context, in_dim) -> (B,)
        h = self.transformer(self.inp(s) + self.pos)
        return self.out(h[:, -1]).squeeze(-1)


def _fit_regressor(
    model: nn.Module,
    inputs: torch.Tensor,
    y: np.ndarray,
    cfg: StepConfig,
    seed: int,
    max_per_epoch: int = 4096,
    batch: int = 256,
) -> nn.Module:
    """MSE regression of y / rul_cap with AdamW (lr 1e-3), ``cfg.head_epochs`` epochs of <= max_per_epoch samples
    (a random subset each epoch; design choice to bound the cost on 2 CPU cores)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    dev = cfg.device
    model = model.to(dev)
    opt = _adamw(model.parameters(), 1e-3)
    yt = torch.from_numpy((y / cfg.rul_cap).astype(np.float32)).to(dev)
    for _ in range(cfg.head_epochs):
        perm = rng.permutation(len(yt))[:max_per_epoch]
        for s in range(0, len(perm), batch):
            b = perm[s : s + batch]
            loss = ((model(inputs[b].to(dev)) - yt[b]) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    model.eval()
    return model


@torch.no_grad()
def _predict(model: nn.Module, inputs: torch.Tensor, cfg: StepConfig) -> np.ndarray:
    out = [model(inputs[i : i + 4096].to(cfg.device)).cpu().numpy() for i in range(0, len(inputs), 4096)]
    return np.clip(np.concatenate(out) * cfg.rul_cap, 0.0, None)


def tr_head_rul(
    F_train: np.ndarray, Wtr: Windows, F_test: np.ndarray, Wte: Windows, cfg: StepConfig, seed: int
) -> np.ndarray:
    """Fit the Tr head on every training window's context, predict RUL at each test unit's last window."""
    mu, sd = F_train.mean(0), F_train.std(0) + 1e-8
    S_tr = torch.from_numpy(((F_train - mu) / sd).astype(np.float32))[torch.from_numpy(context_index(Wtr, cfg.context))]
    y = np.minimum(Wtr.rul, cfg.rul_cap)
    head = _fit_regressor(TrHead(F_train.shape[1], cfg.context), S_tr, y, cfg, seed)
    last = Wte.last_rows()
    ci = torch.from_numpy(context_index(Wte, cfg.context)[last])
    S_te = torch.from_numpy(((F_test - mu) / sd).astype(np.float32))[ci]
    return _predict(head, S_te, cfg)


class MSDCNN(nn.Module):
    """MS-DCNN-like supervised baseline (after Li et al.): parallel 1-D convolutions of kernel 3/5/7 over the
    window, a second multi-scale block, then a dense regressor."""

    def __init__(self, n_channels: int, window: int, width: int = 16) -> None:
        super().__init__()

        def block(c_in: int) -> nn.ModuleList:
            return nn.ModuleList([nn.Conv1d(c_in, width, k, padding=k // 2) for k in (3, 5, 7)])

        self.b1, self.b2 = block(n_channels), block(3 * width)
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(3 * width * window, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, w, C) -> (B,)
        h = x.transpose(1, 2)
        h = torch.relu(torch.cat([c(h) for c in self.b1], 1))
        h = torch.relu(torch.cat([c(h) for c in self.b2], 1))
        return self.fc(h).squeeze(-1)


def cnn_rul(Wtr: Windows, Wte: Windows, cfg: StepConfig, seed: int) -> np.ndarray:
    """Supervised MS-DCNN-like regressor on raw windows; RUL at each test unit's last window."""
    Xtr = torch.from_numpy(Wtr.X)
    net = _fit_regressor(
        MSDCNN(Wtr.X.shape[2], Wtr.X.shape[1]), Xtr, np.minimum(Wtr.rul, cfg.rul_cap), cfg, seed, max_per_epoch=8192
    )
    return _predict(net, torch.from_numpy(Wte.X[Wte.last_rows()]), cfg)

"""STEP: encoder/decoder, fixed prototypes, triplet + prototype losses, triplet sampler (arXiv 2605.31061, Sec. 3).

Loss (released C-MAPSS script):  L = MSE(x_hat, x) + alpha * Triplet + beta_t * Proto, with
  Triplet = mean ReLU(cos(z_a, z_n) - cos(z_a, z_p) + 1)
  Proto   = MSE(z, e1) over each training unit's first 8 windows + MSE(z, e2) over its last 8
  beta_t  = max(beta * 0.95^epoch, 0.05)
e1, e2 are the first two standard basis vectors of R^z_dim, registered as non-trainable buffers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .config import StepConfig

RUL_EDGES = (30.0, 75.0, 125.0)  # groups: <=30, (30, 75], (75, 125], >125  (RUL grouping, released)
RUL_MARGIN = 20.0  # positive: |dRUL| < 20
LIFE_EDGES = (0.4, 0.65, 0.85)  # time-index ablation: t/T in [0,.4), [.4,.65), [.65,.85), [.85,1]
LIFE_MARGIN = 0.08  # positive: |d(t/T)| < 0.08
N_PROTO_WINDOWS = 8  # first/last windows of each training unit anchored at e1/e2


# ------------------------------------------------------------------------------------------------
# encoder / decoder
# ------------------------------------------------------------------------------------------------
class StepEncoder(nn.Module):
    """Window -> z. ``tokenisation="flat"`` is the released model: the flattened window is ONE token, so the
    4-layer transformer (d_model 32, 8 heads, GELU) sees a length-1 sequence and attention is trivial (an MLP
    in effect). ``"cycle"`` (ablation) makes each of the w cycles a token with a learned positional embedding."""

    def __init__(
        self,
        window: int,
        n_channels: int,
        z_dim: int,
        d_model: int = 32,
        n_layers: int = 4,
        n_heads: int = 8,
        tokenisation: str = "flat",
    ) -> None:
        super().__init__()
        self.tokenisation = tokenisation
        n_tok, in_dim = (1, window * n_channels) if tokenisation == "flat" else (window, n_channels)
        self.inp = nn.Linear(in_dim, d_model)
        self.pos = nn.Parameter(torch.zeros(1, n_tok, d_model))
        layer = nn.TransformerEncoderLayer(
            d_model, n_heads, dim_feedforward=4 * d_model, dropout=0.0, activation="gelu", batch_first=True
        )
        self.transformer = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU(), nn.Linear(d_model, z_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, w, C) -> (B, z_dim)
        if self.tokenisation == "flat":
            h = self.inp(x.reshape(len(x), -1)) + self.pos[:, 0]  # (B, d_model): the single token
            for layer in self.transformer.layers:
                h = length1_layer(layer, h)
            return self.head(h)  # mean pool over one token is the identity
        h = self.transformer(self.inp(x) + self.pos)  # (B, w, d_model)
        return self.head(h.mean(1))


def length1_layer(layer: nn.TransformerEncoderLayer, x: torch.Tensor) -> torch.Tensor:
    """Exact nn.TransformerEncoderLayer (post-norm) on a length-1 sequence, without the attention overhead.

    With one key the softmax weight is 1, so self-attention is out_proj(W_v x + b_v); attention dropout drops
    a whole head's weight (then rescales), which is reproduced per (sample, head). x: (B, d_model).
    """
    attn = layer.self_attn
    d, nh = x.shape[-1], attn.num_heads
    v = nn.functional.linear(x, attn.in_proj_weight[2 * d :], attn.in_proj_bias[2 * d :])  # (B, d)
    if layer.training and attn.dropout > 0:
        keep = nn.functional.dropout(v.new_ones(len(x), nh, 1), attn.dropout, training=True)
        v = (v.view(len(x), nh, d // nh) * keep).view(len(x), d)
    x = layer.norm1(x + layer.dropout1(attn.out_proj(v)))
    return layer.norm2(x + layer.dropout2(layer.linear2(layer.dropout(layer.activation(layer.linear1(x))))))


class StepModel(nn.Module):
    """Encoder + MLP decoder + the two fixed prototypes (buffers: never in ``parameters()``)."""

    def __init__(self, window: int, n_channels: int, cfg: StepConfig) -> None:
        super().__init__()
        self.window, self.n_channels = window, n_channels
        self.encoder = StepEncoder(
            window, n_channels, cfg.z_dim, cfg.d_model, cfg.n_layers, cfg.n_heads, cfg.tokenisation
        )
        self.decoder = nn.Sequential(
            nn.Linear(cfg.z_dim, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, window * n_channels)
        )
        eye = torch.eye(cfg.z_dim)
        self.register_buffer("e1", eye[0].clone())  # "initial state" prototype
        self.register_buffer("e2", eye[1].clone())  # "end state" prototype

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.encoder(x)
        return z, self.decoder(z).reshape(x.shape)


# ------------------------------------------------------------------------------------------------
# losses and schedule
# ------------------------------------------------------------------------------------------------
def triplet_loss(z_a: torch.Tensor, z_p: torch.Tensor, z_n: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    """mean ReLU(cos(z_a, z_n) - cos(z_a, z_p) + margin)."""
    cos = nn.functional.cosine_similarity
    return torch.relu(cos(z_a, z_n, dim=-1) - cos(z_a, z_p, dim=-1) + margin).mean()


def proto_loss(
    z: torch.Tensor, is_start: torch.Tensor, is_end: torch.Tensor, e1: torch.Tensor, e2: torch.Tensor
) -> torch.Tensor:
    """MSE(z, e1) over start windows + MSE(z, e2) over end windows (each term 0 when the batch has none)."""
    loss = z.new_zeros(())
    if is_start.any():
        loss = loss + ((z[is_start] - e1) ** 2).mean()
    if is_end.any():
        loss = loss + ((z[is_end] - e2) ** 2).mean()
    return loss


def soft_temporal_loss(z: torch.Tensor, t: torch.Tensor, tau: float) -> torch.Tensor:
    """SoftCLT-like temporal loss within one unit (Lee et al. 2024, soft temporal contrast).

    z: (2K, d) two views of K windows of one unit, t: (2K,) their cycles. Soft labels
    w(t, t') = 2 sigmoid(-tau |t - t'|) (1 for the other view of the same window);
    loss = mean_i [ -sum_{j != i} w_ij log softmax_j(z_i . z_j) ].
    """
    sim = z @ z.T  # (2K, 2K)
    n = len(z)
    mask = torch.eye(n, dtype=torch.bool, device=z.device)
    logits = sim.masked_fill(mask, float("-inf"))
    logp = torch.log_softmax(logits, dim=1).masked_fill(mask, 0.0)
    w = 2 * torch.sigmoid(-tau * (t[:, None] - t[None, :]).abs()).masked_fill(mask, 0.0)
    return -(w * logp).sum(1).mean()


# ------------------------------------------------------------------------------------------------
# triplet sampler
# ------------------------------------------------------------------------------------------------
def make_groups(rul: np.ndarray, life: np.ndarray, grouping: str) -> tuple[np.ndarray, np.ndarray, float]:
    """(group per window, the key positives must be close in, the margin) for "rul" or "time" grouping."""
    if grouping == "rul":
        return 3 - np.digitize(rul, RUL_EDGES, right=True), rul, RUL_MARGIN
    return np.digitize(life, LIFE_EDGES), life, LIFE_MARGIN


@dataclass
class TripletSampler:
    """Vectorised sampler: precomputed positive ranges per window and negative pools per group.

    Positive of i: same unit, same group, |key_j - key_i| < margin, j != i (i itself if nothing else qualifies);
    negative: uniform over windows of any other group. Windows must be sorted by (unit, t); key is monotone
    within a unit, so each positive set is a contiguous range [lo_i, hi_i].
    """

    unit: np.ndarray
    group: np.ndarray
    key: np.ndarray
    margin: float

    def __post_init__(self) -> None:
        n = len(self.unit)
        self.lo = np.zeros(n, dtype=np.int64)
        self.hi = np.zeros(n, dtype=np.int64)
        bounds = np.flatnonzero(np.diff(self.unit)) + 1
        for a, b in zip(np.r_[0, bounds], np.r_[bounds, n], strict=True):
            k = self.key[a:b]
            s = 1.0 if k[-1] >= k[0] else -1.0
            ks = s * k  # ascending
            lo = np.searchsorted(ks, ks - self.margin, side="right")
            hi = np.searchsorted(ks, ks + self.margin, side="left") - 1
            g = self.group[a:b]
            gb = np.flatnonzero(np.diff(g)) + 1
            g_lo = np.repeat(np.r_[0, gb], np.diff(np.r_[0, gb, b - a]))
            g_hi = np.repeat(np.r_[gb, b - a] - 1, np.diff(np.r_[0, gb, b - a]))
            self.lo[a:b] = a + np.maximum(lo, g_lo)
            self.hi[a:b] = a + np.minimum(hi, g_hi)
        self.groups = np.unique(self.group)
        self.neg_pool = {int(g): np.flatnonzero(self.group != g) for g in self.groups}

    def sample(self, idx: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Positive and negative indices for the anchors ``idx``."""
        lo, hi = self.lo[idx], self.hi[idx]
        size = hi - lo  # candidates other than the anchor itself
        draw = lo + np.floor(rng.random(len(idx)) * np.maximum(size, 1)).astype(np.int64)
        pos = np.where(size > 0, draw + (draw >= idx), idx)
        neg = np.empty(len(idx), dtype=np.int64)
        g = self.group[idx]
        for gg in self.groups:
            m = g == gg
            pool = self.neg_pool[int(gg)]
            neg[m] = pool[rng.integers(len(pool), size=int(m.sum()))] if len(pool) else idx[m]
        return pos, neg


def naive_sample(
    unit: np.ndarray, group: np.ndarray, key: np.ndarray, margin: float, idx: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Released-style sampler: rebuilds the candidate lists item by item (O(N) per anchor, O(N^2) per epoch)."""
    all_idx = np.arange(len(unit))
    pos, neg = np.empty(len(idx), np.int64), np.empty(len(idx), np.int64)
    for n, i in enumerate(idx):
        cand = all_idx[(unit == unit[i]) & (group == group[i]) & (np.abs(key - key[i]) < margin) & (all_idx != i)]
        pos[n] = cand[rng.integers(len(cand))] if len(cand) else i
        negs = all_idx[group != group[i]]
        neg[n] = negs[rng.integers(len(negs))] if len(negs) else i
    return pos, neg


def proto_masks(start: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks of each training unit's first / last N_PROTO_WINDOWS windows."""
    is_start, is_end = np.zeros(n, bool), np.zeros(n, bool)
    for a, b in zip(start[:-1], start[1:], strict=True):
        k = min(N_PROTO_WINDOWS, (b - a) // 2)
        is_start[a : a + k] = True
        is_end[b - k : b] = True
    return is_start, is_end


@torch.no_grad()
def encode(model: nn.Module, X: np.ndarray, device: str = "cpu", batch: int = 4096) -> np.ndarray:
    """z for every window, in eval mode: (N, w, C) -> (N, z_dim)."""
    was = model.training
    model.eval()
    enc = model.encoder if hasattr(model, "encoder") else model
    out = [enc(torch.from_numpy(X[i : i + batch]).to(device)).cpu().numpy() for i in range(0, len(X), batch)]
    model.train(was)
    return np.concatenate(out) if out else np.zeros((0, 0))

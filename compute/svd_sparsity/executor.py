"""Conditional-computation executors for the ReGLU FFN y = W_d (ReLU(W_g x) ⊙ W_u x) (spec §2 "Sparse executor").

* ``ffn_dense``                  — the three GEMVs (reference).
* ``ffn_gather(x, idx)``         — only the rows ``idx`` of W_g, W_u and of W_dᵀ (stored d_ff×d so every gather is
                                   row-contiguous): y = W_dᵀ[idx]ᵀ (ReLU(W_g[idx] x) ⊙ W_u[idx] x).
                                   W_g and W_u are interleaved into one [d_ff, 2, d] tensor: one gather per layer.
* ``ffn_gate_first(x)``          — CATS-like exact baseline: dense g, then only the rows with g > 0.
* ``ffn_predicted(x, A, B, τ)``  — the paper's path: ĝ = A(Bx), idx = nonzero(ĝ > τ), then ``ffn_gather``.

False positives only cost time (ReLU zeroes them); false negatives change the output.  Decode is batch 1.
``MaskedFFN`` is the batched (evaluation) equivalent: h ⊙ m with the predicted mask m, same arithmetic result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class FFNWeights:
    """Executor layout of one ReGLU layer."""

    Wgu: torch.Tensor  # [d_ff, 2, d]: row i = (W_g[i], W_u[i])
    WdT: torch.Tensor  # [d_ff, d] = W_dᵀ

    @classmethod
    def from_dense(cls, W_g: torch.Tensor, W_u: torch.Tensor, W_d: torch.Tensor) -> FFNWeights:
        return cls(torch.stack([W_g, W_u], dim=1).contiguous(), W_d.T.contiguous())

    @property
    def d_ff(self) -> int:
        return self.Wgu.shape[0]

    @property
    def d(self) -> int:
        return self.Wgu.shape[2]


def ffn_dense(w: FFNWeights, x: torch.Tensor) -> torch.Tensor:
    """x [d] → y [d]: all d_ff neurons (one GEMV for (g, u), one for W_d)."""
    gu = torch.mv(w.Wgu.view(-1, w.d), x).view(-1, 2)
    h = torch.relu(gu[:, 0]) * gu[:, 1]
    return torch.mv(w.WdT.T, h)


def ffn_gather(w: FFNWeights, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """x [d], idx [k] → y [d] using only the neurons ``idx`` (copies k rows of Wgu and of W_dᵀ)."""
    k = idx.numel()
    gu = torch.mv(w.Wgu.index_select(0, idx).view(2 * k, w.d), x).view(k, 2)
    h = torch.relu(gu[:, 0]) * gu[:, 1]
    return torch.mv(w.WdT.index_select(0, idx).T, h)


def ffn_gate_first(w: FFNWeights, W_g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Exact: dense gate g = W_g x, then the rows of W_u and W_dᵀ where g > 0 (saves ≤ 2/3 of the MACs)."""
    g = torch.mv(W_g, x)
    idx = torch.nonzero(g > 0).squeeze(1)
    u = torch.mv(w.Wgu[:, 1].index_select(0, idx), x)  # W_u rows (strided view, gathered)
    h = torch.relu(g.index_select(0, idx)) * u
    return torch.mv(w.WdT.index_select(0, idx).T, h)


def predict_idx(x: torch.Tensor, A: torch.Tensor, B: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """idx = nonzero(A(Bx) > τ) (τ scalar or per-neuron)."""
    return torch.nonzero(torch.mv(A, torch.mv(B, x)) > tau).squeeze(1)


def ffn_predicted(w: FFNWeights, x: torch.Tensor, A: torch.Tensor, B: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    return ffn_gather(w, x, predict_idx(x, A, B, tau))


def ffn_macs(d: int, d_ff: int, k: int | None = None, rank: int = 0, gate_first: bool = False) -> int:
    """MAC count: dense 3·d·d_ff; sparse 3·d·k (+ r(d + d_ff) for the predictor); gate-first d·d_ff + 2·d·k."""
    if k is None:
        return 3 * d * d_ff
    if gate_first:
        return d * d_ff + 2 * d * k
    return 3 * d * k + rank * (d + d_ff)


# ------------------------------------------------------------------------------------------------
# Modules that plug into compute.core.lm.TinyLM blocks (``blk.ffn = ...``)
# ------------------------------------------------------------------------------------------------
Selector = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (x [..., d], g [..., d_ff]) → bool mask


class MaskedFFN(nn.Module):
    """Batched evaluation of a sparse FFN: y = W_d (ReLU(g) ⊙ u ⊙ m), m = selector(x, g).

    Equal in exact arithmetic to the gather executor with idx = nonzero(m).  ``x_transform`` rewrites the FFN
    input first (TEAL-like input sparsity); ``h_transform`` rewrites h before W_d.  Keeps running counts of the
    kept fraction and of the recall against the true active set.
    """

    def __init__(
        self,
        dense: nn.Module,
        selector: Selector | None = None,
        x_transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
        h_transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        super().__init__()
        self.dense = dense
        self.selector, self.x_transform, self.h_transform = selector, x_transform, h_transform
        self.d_ff = dense.down.weight.shape[1]
        self.kept = self.total = self.hit = self.active = 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g_true = x @ self.dense.up.weight[: self.d_ff].T
        if self.x_transform is not None:
            x = self.x_transform(x)
        g, u = (x @ self.dense.up.weight.T).chunk(2, dim=-1)
        h = torch.relu(g) * u
        if self.selector is not None:
            m = self.selector(x, g)
            h = h * m
            act = g_true > 0
            self.kept += float(m.sum())
            self.total += m.numel()
            self.hit += float((m & act).sum())
            self.active += float(act.sum())
        if self.h_transform is not None:
            h = self.h_transform(h)
        return self.dense.down(h)


class GatherFFN(nn.Module):
    """Batch-1 decode executor plugged into a TinyLM block: mode "svd" | "gate_first" | "oracle" | "dense"."""

    def __init__(
        self,
        dense: nn.Module,
        mode: str,
        A: torch.Tensor | None = None,
        B: torch.Tensor | None = None,
        tau: torch.Tensor | None = None,
        oracle_idx: list[torch.Tensor] | None = None,
    ) -> None:
        super().__init__()
        d_ff = dense.down.weight.shape[1]
        W = dense.up.weight.detach()
        self.w = FFNWeights.from_dense(W[:d_ff], W[d_ff:], dense.down.weight.detach())
        self.W_g = W[:d_ff].contiguous()
        self.mode, self.A, self.B, self.tau = mode, A, B, tau
        self.oracle_idx = oracle_idx or []
        self.calls = 0
        self.kept = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] != 1 or x.shape[1] != 1:  # prefill: exact dense path
            d_ff = self.w.d_ff
            gu = x @ self.w.Wgu.view(2 * d_ff, -1).T
            gu = gu.view(*x.shape[:-1], d_ff, 2)
            return (torch.relu(gu[..., 0]) * gu[..., 1]) @ self.w.WdT
        v = x.view(-1)
        if self.mode == "dense":
            y = ffn_dense(self.w, v)
        elif self.mode == "gate_first":
            y = ffn_gate_first(self.w, self.W_g, v)
        elif self.mode == "oracle":
            idx = self.oracle_idx[self.calls]
            self.kept += idx.numel()
            y = ffn_gather(self.w, v, idx)
        elif self.mode == "svd":
            idx = predict_idx(v, self.A, self.B, self.tau)
            self.kept += idx.numel()
            y = ffn_gather(self.w, v, idx)
        else:
            raise ValueError(f"unknown mode {self.mode!r}")
        self.calls += 1
        return y.view(1, 1, -1)

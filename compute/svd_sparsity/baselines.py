"""Baselines (spec §2): random mask, TEAL-like input-magnitude sparsity, Deja Vu-style trained predictor.

The oracle mask, the gate-first exact path and the unwhitened SVD live in ``executor.py`` / ``predictor.py``.

* Random: keep each neuron with probability p (fresh per token), p = the SVD predictor's measured density.
* TEAL-like (after TEAL): zero the FFN input entries with |x_j| ≤ t_x and the entries of h with |h_i| ≤ t_h;
  t_x, t_h are the per-layer (1 − p)-quantiles of |x| and |h| on calibration data, so a fraction p of the
  columns of W_g/W_u and of the rows of W_dᵀ is read (matched weight traffic).
* Deja Vu-style: an MLP d → r → d_ff (ReLU hidden, design choice) trained with BCE on the activity labels
  1[g_i > 0] of the calibration tokens, then thresholded with the same recall calibration as the SVD predictor;
  at equal r it costs the same r(d + d_ff) MACs.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from compute.core.lm.optim import AdamW


def random_selector(p: float, gen: torch.Generator) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    def sel(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        return torch.rand(g.shape, generator=gen) < p

    return sel


def magnitude_threshold(values: torch.Tensor, keep: float) -> float:
    """t with P(|v| > t) ≈ keep over the given values."""
    a = values.abs().flatten().float()
    if a.numel() > 2_000_000:
        a = a[torch.randperm(a.numel(), generator=torch.Generator().manual_seed(0))[:2_000_000]]
    return float(torch.quantile(a, min(1.0, max(0.0, 1.0 - keep))))


def teal_transforms(t_x: float, t_h: float) -> tuple[Callable, Callable]:
    return (lambda x: x * (x.abs() > t_x)), (lambda h: h * (h.abs() > t_h))


class DejaVuPredictor(nn.Module):
    """logits = W2 ReLU(W1 x): d → r → d_ff."""

    def __init__(self, d: int, r: int, d_ff: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d, r, bias=False)
        self.fc2 = nn.Linear(r, d_ff)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def train_dejavu(
    X: torch.Tensor, active: torch.Tensor, r: int, steps: int = 300, batch: int = 1024, lr: float = 3e-3, seed: int = 0
) -> DejaVuPredictor:
    """BCE on (x, 1[g > 0]) pairs; positives re-weighted by (1 − s)/s so the rare active class is not ignored."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    net = DejaVuPredictor(X.shape[1], r, active.shape[1])
    opt = AdamW(net.parameters(), lr=lr, weight_decay=0.0)
    frac = float(active.float().mean())
    pos_weight = torch.tensor((1 - frac) / max(frac, 1e-6))
    for _ in range(steps):
        idx = torch.randint(0, len(X), (min(batch, len(X)),), generator=gen)
        loss = F.binary_cross_entropy_with_logits(net(X[idx]), active[idx].float(), pos_weight=pos_weight)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    return net

"""Two independent image verifiers and the template-residual oracle (spec §2: select with one, evaluate with another).

* ``SelectNet`` — the selection verifier: a strided CNN with heads clean/defect, shape, colour, cell.
* ``HeldoutNet`` — the held-out evaluator: 5×5 convolutions, max-pooling and an MLP, another seed and
  other renders.
  Both score an image against its caption as  log p(clean) + Σ_attr log p(attr = caption's).
* ``template_residual`` — oracle: the mean squared residual to the caption's clean render at the
  best-fitting jitter on a small grid of centres and sizes (lower is better).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .data import COLOURS, SHAPES, Attributes, cell_centre, paint, sample_batch, shape_mask

HEADS = {"clean": 2, "shape": len(SHAPES), "colour": len(COLOURS), "cell": 9}


class SelectNet(nn.Module):
    def __init__(self, width: int = 32) -> None:
        super().__init__()
        w = width
        self.body = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1),
            nn.GroupNorm(8, w),
            nn.SiLU(),
            nn.Conv2d(w, 2 * w, 3, stride=2, padding=1),
            nn.GroupNorm(8, 2 * w),
            nn.SiLU(),
            nn.Conv2d(2 * w, 2 * w, 3, stride=2, padding=1),
            nn.SiLU(),
        )
        self.pos = nn.Sequential(nn.Flatten(), nn.LazyLinear(64), nn.SiLU())
        self.head = nn.Linear(2 * w + 64, sum(HEADS.values()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.body(x)
        return self.head(torch.cat([h.mean((2, 3)), self.pos(h[:, :8])], 1))


class HeldoutNet(nn.Module):
    def __init__(self, width: int = 24) -> None:
        super().__init__()
        w = width
        self.body = nn.Sequential(
            nn.Conv2d(3, w, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.LazyLinear(128),
            nn.ReLU(),
        )
        self.head = nn.Linear(128, sum(HEADS.values()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def split_logp(logits: torch.Tensor) -> dict[str, torch.Tensor]:
    out, i = {}, 0
    for name, n in HEADS.items():
        out[name] = F.log_softmax(logits[:, i : i + n], dim=1)
        i += n
    return out


def targets(attrs: list[Attributes], clean: np.ndarray) -> dict[str, torch.Tensor]:
    return {
        "clean": torch.as_tensor(clean.astype(np.int64)),
        "shape": torch.tensor([a.shape for a in attrs]),
        "colour": torch.tensor([a.colour for a in attrs]),
        "cell": torch.tensor([a.cell for a in attrs]),
    }


@torch.no_grad()
def score(net: nn.Module, x: torch.Tensor, attrs: list[Attributes]) -> torch.Tensor:
    """log p(clean | x) + log p(shape) + log p(colour) + log p(cell), each at the caption's value.  (B,)"""
    lp = split_logp(net(x))
    tg = targets(attrs, np.ones(len(attrs), bool))
    return sum(lp[k].gather(1, tg[k][:, None].to(x.device))[:, 0] for k in HEADS)


@torch.no_grad()
def p_clean(net: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return split_logp(net(x))["clean"][:, 1].exp()


def train_verifier(
    net: nn.Module,
    size: int,
    steps: int,
    seed: int,
    batch: int = 128,
    lr: float = 2e-3,
    progress: Callable[[int, float], None] | None = None,
) -> nn.Module:
    """Cross-entropy on all four heads over fresh renders (half defective) with light Gaussian-noise jitter."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    b0 = sample_batch(2, size, rng, 0.5)
    net(torch.as_tensor(b0.images))  # materialize lazy layers
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(steps, 2))
    for step in range(steps):
        b = sample_batch(batch, size, rng, 0.5)
        x = torch.as_tensor(b.images)
        x = x + rng.uniform(0, 0.1) * torch.randn_like(x)
        lp = split_logp(net(x))
        tg = targets(b.attrs, ~b.defective)
        loss = sum(F.nll_loss(lp[k], tg[k]) for k in HEADS)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if progress is not None and (step % 25 == 0 or step == steps - 1):
            progress(step, loss.item())
    return net.eval()


def _templates(attr: Attributes, size: int) -> torch.Tensor:
    """(n, 3, S, S) clean renders of ``attr`` on a 5×5 grid of centre offsets × 3 sizes."""
    cy, cx = cell_centre(attr.cell, size)
    offs = np.linspace(-1, 1, 5) * size / 21
    out = []
    for dy in offs:
        for dx in offs:
            for s in (0.85, 1.0, 1.15):
                out.append(paint(shape_mask(attr.shape, cy + dy, cx + dx, s * size / 6.4, size), attr.colour))
    return torch.as_tensor(np.stack(out))


_TEMPLATE_CACHE: dict[tuple[Attributes, int], torch.Tensor] = {}


@torch.no_grad()
def template_residual(x: torch.Tensor, attrs: list[Attributes]) -> torch.Tensor:
    """min over the template grid of the mean squared pixel residual to the caption's clean render.  (B,)"""
    out = torch.empty(x.shape[0])
    for i, a in enumerate(attrs):
        key = (a, x.shape[-1])
        if key not in _TEMPLATE_CACHE:
            _TEMPLATE_CACHE[key] = _templates(a, x.shape[-1])
        tpl = _TEMPLATE_CACHE[key].to(x.device)
        out[i] = ((tpl - x[i : i + 1]) ** 2).mean((1, 2, 3)).min()
    return out

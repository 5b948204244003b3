"""LoTTS defect localization, the paper's steps ①–④ (spec §2), and its planted-defect metrics.

① prompt contrast   CA_diff = CA_neg[:, low_quality] − CA_pos[:, high_quality]  (each column normalised over positions)
② propagation       CA′ = SA · CA  (each prompt's own head-averaged self-attention)
③ foreground prior  P = CA′_diff + λ·CA′_orig,  CA_orig = mean of the content-token columns (positive prompt)
④ mask              M = 𝟙[P > Perc(P, 1 − r)], nearest-upsampled to the image, optionally dilated

Maps are averaged over the chosen layers (one resolution, S/2 by default) and over the timesteps
t ∈ loc_t·T, computed on x_t ~ q(x_t | x₀) with conditional passes only (2·n_t NFE per image).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from scipy.stats import rankdata

from .data import CONTENT_SLOTS, HIGH, LOW, QUALITY_SLOT, SEQ_LEN, Attributes, tokens
from .diffusion import T_TRAIN, alphas_cumprod, q_sample
from .model import CountingUNet

LAYER_SETS = {"s2": ["down", "up"], "down": ["down"], "up": ["up"], "mid": ["mid"], "all": ["down", "mid", "up"]}


def layer_names(net: CountingUNet, layers: str) -> list[str]:
    return [k for k in net.unet.attn_blocks() if k.split("_")[0] in LAYER_SETS[layers]]


def prompt_ids(attrs: list[Attributes], quality: str | None) -> torch.Tensor:
    return torch.as_tensor(np.stack([tokens(a, quality) for a in attrs]))


@dataclass
class Maps:
    """Head-, layer- and timestep-averaged attention of one prompt.  sa: (B, P, P); ca: (B, P, L)."""

    sa: torch.Tensor
    ca: torch.Tensor


@torch.no_grad()
def capture_maps(
    net: CountingUNet,
    x0: torch.Tensor,
    attrs: list[Attributes],
    loc_t: tuple[float, ...],
    layers: str,
    gen: torch.Generator,
    per_step: bool = False,
) -> tuple[Maps, Maps] | dict[tuple[int, str], tuple[Maps, Maps]]:
    """Positive ("… high quality") and negative ("… low quality") prompt maps on x_t ~ q(x_t | x₀).

    With ``per_step`` the un-averaged maps per (timestep, layer) are returned instead.
    """
    ac = alphas_cumprod().to(x0.device)
    B = x0.shape[0]
    ids = torch.cat([prompt_ids(attrs, "high"), prompt_ids(attrs, "low")]).to(x0.device)
    names = layer_names(net, layers)
    acc: dict[tuple[int, str], tuple[Maps, Maps]] = {}
    for frac in loc_t:
        t = min(T_TRAIN - 1, int(round(frac * T_TRAIN)))
        eps = torch.randn(x0.shape, generator=gen, device=x0.device)
        xt = q_sample(x0, t, eps, ac)
        with net.capture(names) as cap:
            net(torch.cat([xt, xt]), torch.full((2 * B,), t, device=x0.device), ids)
            for name, (sa, ca) in cap.maps().items():
                acc[(t, name)] = (Maps(sa[:B], ca[:B]), Maps(sa[B:], ca[B:]))
    if per_step:
        return acc
    n = len(acc)
    pos = Maps(sum(v[0].sa for v in acc.values()) / n, sum(v[0].ca for v in acc.values()) / n)
    neg = Maps(sum(v[1].sa for v in acc.values()) / n, sum(v[1].ca for v in acc.values()) / n)
    return pos, neg


def _norm(v: torch.Tensor) -> torch.Tensor:
    """Normalise a map (B, P) over positions to sum 1 (design choice of the spec)."""
    return v / v.sum(1, keepdim=True).clamp_min(1e-12)


def score_map(
    pos: Maps,
    neg: Maps,
    lam: float = 0.3,
    contrast: bool = True,
    propagate: bool = True,
) -> torch.Tensor:
    """P (B, P) from steps ①–③; ``contrast``/``propagate``/``lam = 0`` switch ①/②/③ off for ablations."""
    assert pos.ca.shape[-1] == SEQ_LEN
    ca_neg = _norm(neg.ca[:, :, QUALITY_SLOT])
    ca_pos = _norm(pos.ca[:, :, QUALITY_SLOT])
    ca_orig = _norm(pos.ca[:, :, list(CONTENT_SLOTS)].mean(-1))

    def prop(sa: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.bmm(sa, v[:, :, None])[:, :, 0] if propagate else v

    diff = prop(neg.sa, ca_neg) - prop(pos.sa, ca_pos) if contrast else prop(neg.sa, ca_neg)
    return diff + lam * prop(pos.sa, ca_orig)


def top_r_mask(P: torch.Tensor, r: float, size: int, dilate: int = 0) -> torch.Tensor:
    """Step ④: M = 𝟙[P > Perc(P, 1 − r)] at attention resolution → (B, 1, S, S) nearest-upsampled {0, 1}.

    Exactly round(r·P_count) cells are selected (ties broken by index), so the density is r up to resolution.
    """
    B, n = P.shape
    side = int(round(n**0.5))
    k = max(1, int(round(r * n)))
    idx = torch.sort(P, dim=1, descending=True, stable=True).indices[:, :k]
    m = torch.zeros_like(P).scatter_(1, idx, 1.0).view(B, 1, side, side)
    m = F.interpolate(m, size=(size, size), mode="nearest")
    if dilate > 0:
        m = F.max_pool2d(m, 2 * dilate + 1, stride=1, padding=dilate)
    return m


def random_mask(B: int, n_cells: int, r: float, size: int, gen: torch.Generator, dilate: int = 0) -> torch.Tensor:
    """Random-mask baseline: the same number of attention cells, drawn uniformly."""
    return top_r_mask(torch.rand(B, n_cells, generator=gen), r, size, dilate)


def upsample_scores(P: torch.Tensor, size: int) -> torch.Tensor:
    """(B, P) → (B, S, S) by nearest neighbour (pixel scores for AUROC)."""
    side = int(round(P.shape[1] ** 0.5))
    return F.interpolate(P.view(-1, 1, side, side), size=(size, size), mode="nearest")[:, 0]


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Mann–Whitney AUROC with mid-ranks for ties; nan when a class is empty."""
    s, y = np.ravel(scores), np.ravel(labels).astype(bool)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    ranks = rankdata(s)
    return float((ranks[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def iou(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(bool), b.astype(bool)
    u = (a | b).sum()
    return float((a & b).sum() / u) if u else float("nan")


@torch.no_grad()
def localize(
    net: CountingUNet,
    x0: torch.Tensor,
    attrs: list[Attributes],
    r: float,
    lam: float,
    loc_t: tuple[float, ...],
    gen: torch.Generator,
    layers: str = "down",
    dilate: int = 0,
    propagate: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The full ①–④ pipeline (``propagate=False`` skips ②): returns (mask (B, 1, S, S), P (B, P))."""
    pos, neg = capture_maps(net, x0, attrs, loc_t, layers, gen)
    P = score_map(pos, neg, lam, propagate=propagate)
    return top_r_mask(P, r, x0.shape[-1], dilate), P


__all__ = ["HIGH", "LOW", "localize", "score_map", "top_r_mask", "auroc", "iou", "capture_maps", "random_mask"]

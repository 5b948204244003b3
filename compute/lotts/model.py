"""A compact text-conditioned UNet with self- and cross-attention whose softmax maps can be captured.

Design choice (spec §2 allows "diffusers' UNet built from a config, or a compact torch model"): a plain
torch UNet in the layout of ``UNet2DConditionModel`` — ResNet blocks with timestep embedding, down/up
sampling, and transformer blocks (self-attention, cross-attention to the caption, feed-forward) at the
S/2 and S/4 resolutions.  No diffusers dependency, so no attention-processor API drift: every
``Attention`` stores its head-averaged probabilities when ``record`` is on.

Shapes: images (B, 3, S, S); captions (B, L) token ids; cross-attention maps (B, P, L) with P = (S/2)²;
self-attention maps (B, P, P).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .data import SEQ_LEN, VOCAB


@dataclass
class UNetConfig:
    """Architecture of the denoiser (the spec's blocks (32, 64, 64), cross_attention_dim 64)."""

    size: int = 16
    channels: tuple[int, int, int] = (32, 64, 64)
    ctx_dim: int = 64  # cross_attention_dim
    heads: int = 2
    vocab: int = len(VOCAB)
    seq_len: int = SEQ_LEN
    prediction: str = "v"  # "v" (SD2.1's v-prediction) or "eps"; samplers always work with ε̂

    def to_dict(self) -> dict:
        d = asdict(self)
        d["channels"] = list(self.channels)
        return d


class Attention(nn.Module):
    """Multi-head attention; with ``record`` on it keeps the head-averaged softmax probabilities."""

    def __init__(self, dim: int, ctx_dim: int | None = None, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(ctx_dim or dim, dim, bias=False)
        self.to_v = nn.Linear(ctx_dim or dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.record = False
        self.probs: torch.Tensor | None = None  # (B, N, M)

    def forward(self, x: torch.Tensor, ctx: torch.Tensor | None = None) -> torch.Tensor:
        B, N, C = x.shape
        ctx = x if ctx is None else ctx
        h, d = self.heads, C // self.heads
        q = self.to_q(x).view(B, N, h, d).transpose(1, 2)  # (B, h, N, d)
        k = self.to_k(ctx).view(B, -1, h, d).transpose(1, 2)  # (B, h, M, d)
        v = self.to_v(ctx).view(B, -1, h, d).transpose(1, 2)
        p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1)  # (B, h, N, M)
        if self.record:
            self.probs = p.mean(1).detach()
        out = (p @ v).transpose(1, 2).reshape(B, N, C)
        return self.to_out(out)


class TransformerBlock(nn.Module):
    """x + SA(LN x); x + CA(LN x, text); x + FF(LN x), on the flattened feature map."""

    def __init__(self, ch: int, ctx_dim: int, heads: int) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(8, ch)
        self.proj_in = nn.Linear(ch, ch)
        self.ln1, self.ln2, self.ln3 = nn.LayerNorm(ch), nn.LayerNorm(ch), nn.LayerNorm(ch)
        self.self_attn = Attention(ch, None, heads)
        self.cross_attn = Attention(ch, ctx_dim, heads)
        self.ff = nn.Sequential(nn.Linear(ch, 2 * ch), nn.GELU(), nn.Linear(2 * ch, ch))
        self.proj_out = nn.Linear(ch, ch)

    def forward(self, x: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        h = self.proj_in(self.norm(x).flatten(2).transpose(1, 2))  # (B, HW, C)
        h = h + self.self_attn(self.ln1(h))
        h = h + self.cross_attn(self.ln2(h), ctx)
        h = h + self.ff(self.ln3(h))
        return x + self.proj_out(h).transpose(1, 2).reshape(B, C, H, W)


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int, temb: int) -> None:
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(temb, cout)
        self.n2, self.c2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        h = self.c1(F.silu(self.n1(x))) + self.t(temb)[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return self.skip(x) + h


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of integer timesteps (B,) → (B, dim) (DDPM / Transformer convention)."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    a = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(a), torch.sin(a)], dim=1)


class TextEncoder(nn.Module):
    """Learned token embedding + learned positions + LayerNorm (no token mixing: each key is its own word)."""

    def __init__(self, vocab: int, seq_len: int, dim: int) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(seq_len, dim))
        self.ln = nn.LayerNorm(dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.ln(self.tok(ids) + self.pos[None])


class TinyUNet(nn.Module):
    """Denoising UNet (v- or ε-prediction): S → S/2 (attn) → S/4 (attn) → S/2 (attn) → S."""

    def __init__(self, cfg: UNetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        c0, c1, c2 = cfg.channels
        temb = 4 * c0
        self.text = TextEncoder(cfg.vocab, cfg.seq_len, cfg.ctx_dim)
        self.temb = nn.Sequential(nn.Linear(c0, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.conv_in = nn.Conv2d(3, c0, 3, padding=1)
        self.d0 = ResBlock(c0, c0, temb)
        self.down0 = nn.Conv2d(c0, c1, 3, stride=2, padding=1)
        self.d1, self.d1_attn = ResBlock(c1, c1, temb), TransformerBlock(c1, cfg.ctx_dim, cfg.heads)
        self.down1 = nn.Conv2d(c1, c2, 3, stride=2, padding=1)
        self.m1, self.m_attn = ResBlock(c2, c2, temb), TransformerBlock(c2, cfg.ctx_dim, cfg.heads)
        self.m2 = ResBlock(c2, c2, temb)
        self.up1 = nn.Conv2d(c2, c1, 3, padding=1)
        self.u1, self.u1_attn = ResBlock(2 * c1, c1, temb), TransformerBlock(c1, cfg.ctx_dim, cfg.heads)
        self.up0 = nn.Conv2d(c1, c0, 3, padding=1)
        self.u0 = ResBlock(2 * c0, c0, temb)
        self.out = nn.Sequential(nn.GroupNorm(8, c0), nn.SiLU(), nn.Conv2d(c0, 3, 3, padding=1))

    def attn_blocks(self) -> dict[str, TransformerBlock]:
        """Transformer blocks by name and resolution: ``down_{S/2}``, ``mid_{S/4}``, ``up_{S/2}``."""
        s = self.cfg.size
        return {f"down_{s // 2}": self.d1_attn, f"mid_{s // 4}": self.m_attn, f"up_{s // 2}": self.u1_attn}

    def forward(self, x: torch.Tensor, t: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        ctx = self.text(ids)
        e = self.temb(timestep_embedding(t, self.cfg.channels[0]))
        h0 = self.d0(self.conv_in(x), e)
        h1 = self.d1_attn(self.d1(self.down0(h0), e), ctx)
        h = self.m2(self.m_attn(self.m1(self.down1(h1), e), ctx), e)
        h = self.up1(F.interpolate(h, scale_factor=2, mode="nearest"))
        h = self.u1_attn(self.u1(torch.cat([h, h1], 1), e), ctx)
        h = self.up0(F.interpolate(h, scale_factor=2, mode="nearest"))
        h = self.u0(torch.cat([h, h0], 1), e)
        return self.out(h)


class CountingUNet(nn.Module):
    """Wraps the UNet; ``nfe`` counts image-forwards (one NFE = one UNet pass on one image, spec §2)."""

    def __init__(self, unet: TinyUNet) -> None:
        super().__init__()
        self.unet = unet
        self.nfe = 0

    def forward(self, x: torch.Tensor, t: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        self.nfe += int(x.shape[0])
        return self.unet(x, t, ids)

    def capture(self, layers: list[str] | None = None) -> _Capture:
        return _Capture(self.unet, layers)


class _Capture:
    """Context manager: record attention probabilities of the named transformer blocks during forwards."""

    def __init__(self, unet: TinyUNet, layers: list[str] | None) -> None:
        blocks = unet.attn_blocks()
        self.blocks = {k: v for k, v in blocks.items() if layers is None or k in layers}
        if not self.blocks:
            raise ValueError(f"no attention layer among {layers}; have {list(blocks)}")

    def __enter__(self) -> _Capture:
        for b in self.blocks.values():
            b.self_attn.record = b.cross_attn.record = True
        return self

    def maps(self) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """{layer: (self-attention (B, P, P), cross-attention (B, P, L))} of the last forward."""
        return {k: (b.self_attn.probs, b.cross_attn.probs) for k, b in self.blocks.items()}

    def __exit__(self, *exc: object) -> None:
        for b in self.blocks.values():
            b.self_attn.record = b.cross_attn.record = False
            b.self_attn.probs = b.cross_attn.probs = None

"""The STRATA tile model ("TileFormer"): 3D patch embedding, NA transformer with 2D RoPE, pixel de-aliasing decoder.

Re-implemented from the paper's description and the spec (physicsnemo's code is not imported):
- patch embedding: Conv3d, kernel = stride = (p_d, p_h, p_w) over (levels, H, W), variables as channels;
- blocks: x += NA(RMSNorm(x)); x += MLP(RMSNorm(x)), QK-RMSNorm, RoPE on q, k;
- RoPE: axial 2D with continuous positions (x, y); half of head_dim rotates by x, half by y, θ_j = 100^(−2j/(hd/2));
- pixel decoder: NA (kernel 3) at pixel resolution with per-pixel AdaLN(shift, scale, gate) conditioned on the tokens
  (``bilinear_dw``: trilinear upsample → depthwise 5×5 → RMSNorm → GELU → Linear(6·dim); ``pixel_proj``: each token →
  p·p·6·dim values on its own pixels); AdaLN and the output head are zero-initialised (the untrained model
  predicts a zero increment).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .na import neighbourhood_attention
from .tiles import token_positions


@dataclass
class ModelConfig:
    """Architecture of the tile model."""

    in_channels: int = 5  # h, u, v, q, P (+1 static sin(lat) channel is added internally)
    levels: int = 1  # D
    patch: tuple[int, int, int] = (1, 2, 2)  # (p_d, p_h, p_w)
    width: int = 64
    depth: int = 3
    heads: int = 4
    na_kernel: int = 5
    mlp_ratio: float = 2.0
    rope: str = "stereo"  # none | axial_index | stereo
    rope_length: float = 0.0982  # ℓ (radians) dividing stereographic coordinates: one patch at 32×64, p = 2
    decoder: str = "bilinear_dw"  # none | pixel_proj | bilinear_dw
    pixel_width: int = 16
    pixel_layers: int = 1
    pixel_kernel: int = 3
    na_impl: str = "auto"  # auto | dense | gather


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6, affine: bool = True) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim)) if affine else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y * self.weight if self.weight is not None else y


def rope_angles(pos: torch.Tensor, head_dim: int, base: float = 100.0) -> torch.Tensor:
    """Angles (B, N, hd/2): first hd/4 pairs use x·θ_j, the other hd/4 pairs y·θ_j, θ_j = base^(−2j/(hd/2))."""
    quarter = head_dim // 4
    theta = base ** (-2.0 * torch.arange(quarter, dtype=pos.dtype, device=pos.device) / (head_dim // 2))
    return torch.cat([pos[..., :1] * theta, pos[..., 1:2] * theta], dim=-1)


def apply_rope(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate adjacent channel pairs (2i, 2i+1) of x (B, h, N, hd) by angles (B, N, hd/2)."""
    cos, sin = torch.cos(angles)[:, None], torch.sin(angles)[:, None]
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class NAttention(nn.Module):
    """Multi-head neighbourhood self-attention with QK-RMSNorm and optional RoPE."""

    def __init__(self, dim: int, heads: int, kernel: tuple[int, ...], impl: str = "auto") -> None:
        super().__init__()
        self.heads, self.kernel, self.impl = heads, kernel, impl
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        hd = dim // heads
        self.qn, self.kn = RMSNorm(hd), RMSNorm(hd)

    def forward(self, x: torch.Tensor, shape: tuple[int, ...], angles: torch.Tensor | None) -> torch.Tensor:
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)  # (B, h, N, hd)
        q, k = self.qn(q), self.kn(k)
        if angles is not None:
            q, k = apply_rope(q, angles), apply_rope(k, angles)
        y = neighbourhood_attention(q, k, v, shape, self.kernel, self.impl)
        return self.proj(y.transpose(1, 2).reshape(b, n, c))


class Block(nn.Module):
    """Pre-norm transformer block: x += NA(RMSNorm(x)); x += MLP(RMSNorm(x))."""

    def __init__(self, dim: int, heads: int, kernel: tuple[int, ...], mlp_ratio: float, impl: str) -> None:
        super().__init__()
        self.n1, self.n2 = RMSNorm(dim), RMSNorm(dim)
        self.attn = NAttention(dim, heads, kernel, impl)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor, shape: tuple[int, ...], angles: torch.Tensor | None) -> torch.Tensor:
        x = x + self.attn(self.n1(x), shape, angles)
        return x + self.mlp(self.n2(x))


class PixelBlock(nn.Module):
    """Pixel-resolution block with per-pixel AdaLN: h += g_a·NA(mod(h)), h += g_m·MLP(mod(h))."""

    def __init__(self, dim: int, kernel: tuple[int, ...], impl: str) -> None:
        super().__init__()
        self.n1, self.n2 = RMSNorm(dim, affine=False), RMSNorm(dim, affine=False)
        self.attn = NAttention(dim, max(1, dim // 16), kernel, impl)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, h: torch.Tensor, cond: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
        s_a, c_a, g_a, s_m, c_m, g_m = cond.chunk(6, dim=-1)
        h = h + g_a * self.attn(self.n1(h) * (1 + c_a) + s_a, shape, None)
        return h + g_m * self.mlp(self.n2(h) * (1 + c_m) + s_m)


class TileModel(nn.Module):
    """Tile → predicted normalised 10-min increment.  Input (B, C, D, T, T) normalised fields + pixel lat/lon."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        c_in = cfg.in_channels + 1
        pd, ph, pw = cfg.patch
        self.embed = nn.Conv3d(c_in, cfg.width, kernel_size=cfg.patch, stride=cfg.patch)
        kern = (cfg.na_kernel, cfg.na_kernel, cfg.na_kernel)
        self.blocks = nn.ModuleList(
            [Block(cfg.width, cfg.heads, kern, cfg.mlp_ratio, cfg.na_impl) for _ in range(cfg.depth)]
        )
        self.norm = RMSNorm(cfg.width)
        n_pix = pd * ph * pw
        if cfg.decoder == "none":
            self.head = nn.Linear(cfg.width, n_pix * cfg.in_channels)
            nn.init.zeros_(self.head.weight)
            nn.init.zeros_(self.head.bias)
        else:
            dim = cfg.pixel_width
            self.pix_in = nn.Linear(c_in, dim)
            if cfg.decoder == "pixel_proj":
                self.cond = nn.Linear(cfg.width, n_pix * 6 * dim)
                zero = self.cond
            elif cfg.decoder == "bilinear_dw":
                self.dw = nn.Conv3d(cfg.width, cfg.width, (1, 5, 5), padding=(0, 2, 2), groups=cfg.width)
                self.cond_norm = RMSNorm(cfg.width)
                self.cond = nn.Linear(cfg.width, 6 * dim)
                zero = self.cond
            else:
                raise ValueError(f"unknown decoder {cfg.decoder!r}")
            nn.init.zeros_(zero.weight)
            nn.init.zeros_(zero.bias)
            pk = (cfg.pixel_kernel,) * 3
            self.pixel_blocks = nn.ModuleList([PixelBlock(dim, pk, cfg.na_impl) for _ in range(cfg.pixel_layers)])
            self.pix_norm = RMSNorm(dim)
            self.head = nn.Linear(dim, cfg.in_channels)
            nn.init.zeros_(self.head.weight)
            nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor, lat: torch.Tensor, lon: torch.Tensor) -> torch.Tensor:
        cfg = self.cfg
        b, c, d, h, w = x.shape
        pd, ph, pw = cfg.patch
        static = torch.sin(lat)[:, None, None].expand(b, 1, d, h, w).to(x.dtype)  # Coriolis ∝ sin φ (design)
        xin = torch.cat([x, static], 1)  # (B, C+1, D, H, W)
        tok = self.embed(xin)  # (B, width, nd, nh, nw)
        nd, nh, nw = tok.shape[2:]
        shape = (nd, nh, nw)
        z = tok.flatten(2).transpose(1, 2)  # (B, N, width), N = nd·nh·nw (depth-major)
        angles = None
        if cfg.rope != "none":
            pos = token_positions(lat, lon, (ph, pw), cfg.rope, cfg.rope_length).to(x.dtype)  # (B, nh·nw, 2)
            pos = pos.repeat(1, nd, 1)  # all depth levels share the horizontal coordinates
            angles = rope_angles(pos, cfg.width // cfg.heads)
        for blk in self.blocks:
            z = blk(z, shape, angles)
        z = self.norm(z)
        if cfg.decoder == "none":
            out = self.head(z).reshape(b, nd, nh, nw, c, pd, ph, pw)
            return out.permute(0, 4, 1, 5, 2, 6, 3, 7).reshape(b, c, d, h, w)
        dim = cfg.pixel_width
        zg = z.transpose(1, 2).reshape(b, cfg.width, nd, nh, nw)
        if cfg.decoder == "pixel_proj":
            cond = self.cond(z).reshape(b, nd, nh, nw, pd, ph, pw, 6 * dim)
            cond = cond.permute(0, 1, 4, 2, 5, 3, 6, 7).reshape(b, d * h * w, 6 * dim)
        else:
            up = F.interpolate(zg, size=(d, h, w), mode="trilinear", align_corners=False)
            up = self.dw(up).flatten(2).transpose(1, 2)  # (B, D·H·W, width)
            cond = self.cond(F.gelu(self.cond_norm(up)))
        hpix = self.pix_in(xin.flatten(2).transpose(1, 2))  # (B, D·H·W, dim)
        for blk in self.pixel_blocks:
            hpix = blk(hpix, cond, (d, h, w))
        out = self.head(self.pix_norm(hpix))  # (B, D·H·W, C)
        return out.transpose(1, 2).reshape(b, c, d, h, w)


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())

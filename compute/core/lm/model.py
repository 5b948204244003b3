"""A tiny decoder-only transformer with a KV cache (spec grpo_core §2 "Model").

Pre-norm (RMSNorm) blocks, rotary position embeddings (RoPE), GELU or ReGLU feed-forward, tied input/output
embeddings, no dropout.  Every forward takes explicit per-row ``positions`` and a key-validity mask so that
left-padded, mixed-length prompts get the same logits with and without the cache (design choice: left padding
with per-row RoPE positions rather than bucketing by length).

Shapes: B batch, T new tokens, S = cached + new keys, H heads, dh = d_model / H.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

# name → overrides of LMConfig; parameter counts exclude the (tied) embedding
SIZES: dict[str, dict[str, int]] = {
    "micro": {"d_model": 32, "n_layers": 1, "n_heads": 2, "d_ff": 128},  # tests: builds in seconds
    "small": {"d_model": 128, "n_layers": 4, "n_heads": 4, "d_ff": 512},  # 0.8 M, default
    "medium": {"d_model": 192, "n_layers": 6, "n_heads": 6, "d_ff": 768},  # 2.7 M, headline presets
    "large": {"d_model": 256, "n_layers": 8, "n_heads": 8, "d_ff": 1024},  # 6.4 M, GPU
}


@dataclass
class LMConfig:
    """Plain values; stored with every checkpoint."""

    vocab_size: int = 48
    d_model: int = 128
    n_layers: int = 4
    n_heads: int = 4
    d_ff: int = 512  # hidden width of the FFN (4·d is the GPT-2 rule of thumb)
    ffn: str = "gelu"  # "gelu" or "reglu" (ReLU-gated linear unit; svd_sparsity needs it)
    max_len: int = 256  # longest prompt + response
    rope_base: float = 10000.0

    @classmethod
    def sized(cls, size: str, vocab_size: int, **kw: object) -> LMConfig:
        return cls(vocab_size=vocab_size, **{**SIZES[size], **kw})  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x²) + eps) · g."""

    def __init__(self, d: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_cos_sin(positions: torch.Tensor, dh: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin of θ_{p,i} = p · base^(−2i/dh) for integer positions [B, T] → [B, 1, T, dh]."""
    inv_freq = base ** (-torch.arange(0, dh, 2, device=positions.device, dtype=torch.float32) / dh)
    ang = positions.float()[..., None] * inv_freq  # (B, T, dh/2)
    ang = torch.cat([ang, ang], dim=-1)  # (B, T, dh)
    return ang.cos()[:, None], ang.sin()[:, None]


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate pairs (x_i, x_{i+dh/2}) by θ (the "rotate-half" form of RoPE)."""
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class KVCache:
    """Preallocated per-layer key/value buffers [B, H, T_max, dh] plus the key-validity mask [B, T_max]."""

    def __init__(self, cfg: LMConfig, batch: int, t_max: int, device: torch.device, dtype: torch.dtype) -> None:
        dh = cfg.d_model // cfg.n_heads
        shape = (batch, cfg.n_heads, t_max, dh)
        self.k = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        self.valid = torch.zeros(batch, t_max, dtype=torch.bool, device=device)
        self.length = 0
        self.t_max = t_max


class Attention(nn.Module):
    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.h, self.dh = cfg.n_heads, cfg.d_model // cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(
        self,
        x: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        mask: torch.Tensor,
        cache: KVCache | None,
        layer: int,
    ) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        q = q.view(B, T, self.h, self.dh).transpose(1, 2)  # (B, H, T, dh)
        k = k.view(B, T, self.h, self.dh).transpose(1, 2)
        v = v.view(B, T, self.h, self.dh).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:
            s0 = cache.length
            cache.k[layer][:, :, s0 : s0 + T] = k
            cache.v[layer][:, :, s0 : s0 + T] = v
            k, v = cache.k[layer][:, :, : s0 + T], cache.v[layer][:, :, : s0 + T]  # (B, H, S, dh)
        if T == 1:  # decode step: a plain masked softmax beats the CPU flash kernel for one query
            att = (q @ k.transpose(-2, -1)) * (self.dh**-0.5)  # (B, H, 1, S)
            y = att.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, H, T, dh)
        return self.proj(y.transpose(1, 2).reshape(B, T, D))


class FeedForward(nn.Module):
    """GELU: W2·gelu(W1 x).  ReGLU: W2·(relu(W1 x) ⊙ V x) (Shazeer 2020)."""

    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        if cfg.ffn not in ("gelu", "reglu"):
            raise ValueError(f"ffn must be 'gelu' or 'reglu', got {cfg.ffn!r}")
        self.kind = cfg.ffn
        self.up = nn.Linear(cfg.d_model, cfg.d_ff * (2 if cfg.ffn == "reglu" else 1), bias=False)
        self.down = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "gelu":
            return self.down(F.gelu(self.up(x)))
        a, b = self.up(x).chunk(2, dim=-1)
        return self.down(F.relu(a) * b)


class Block(nn.Module):
    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        self.ln1, self.attn = RMSNorm(cfg.d_model), Attention(cfg)
        self.ln2, self.ffn = RMSNorm(cfg.d_model), FeedForward(cfg)

    def forward(self, x, cos, sin, mask, cache, layer):  # type: ignore[no-untyped-def]
        x = x + self.attn(self.ln1(x), cos, sin, mask, cache, layer)
        return x + self.ffn(self.ln2(x))


def positions_from_valid(valid: torch.Tensor) -> torch.Tensor:
    """Per-row RoPE positions for a left-padded batch: p = (cumsum(valid) − 1)⁺ ([B, T] long)."""
    return (valid.long().cumsum(-1) - 1).clamp(min=0)


class TinyLM(nn.Module):
    """Decoder-only LM.  ``forward(tokens, positions, valid, cache)`` → logits [B, T, V]."""

    def __init__(self, cfg: LMConfig) -> None:
        super().__init__()
        if cfg.d_model % cfg.n_heads or (cfg.d_model // cfg.n_heads) % 2:
            raise ValueError("d_model / n_heads must be an even integer (RoPE rotates pairs)")
        self.cfg = cfg
        self.emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.ln_f = RMSNorm(cfg.d_model)
        # init as GPT-2: N(0, 0.02), residual projections scaled by 1/sqrt(2L)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * cfg.n_layers) if name.endswith(("proj.weight", "down.weight")) else 0.02
                nn.init.normal_(p, 0.0, std)

    @property
    def device(self) -> torch.device:
        return self.emb.weight.device

    def n_params(self, include_embedding: bool = False) -> int:
        n = sum(p.numel() for p in self.parameters())
        return n if include_embedding else n - self.emb.weight.numel()

    def new_cache(self, batch: int, t_max: int) -> KVCache:
        return KVCache(self.cfg, batch, t_max, self.device, self.emb.weight.dtype)

    def forward(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor | None = None,
        valid: torch.Tensor | None = None,
        cache: KVCache | None = None,
        return_hidden: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """tokens, positions, valid: [B, T] (valid marks real, non-pad tokens).

        With a cache the T new tokens are appended after the ``cache.length`` cached ones.  A query attends to
        valid keys at or before its own index, and always to itself (so pad rows never produce NaNs).
        """
        B, T = tokens.shape
        if valid is None:
            valid = torch.ones(B, T, dtype=torch.bool, device=tokens.device)
        valid = valid.bool()
        if positions is None:
            positions = positions_from_valid(valid)
        s0 = cache.length if cache is not None else 0
        if cache is not None:
            if s0 + T > cache.t_max:
                raise ValueError("KV cache is full")
            cache.valid[:, s0 : s0 + T] = valid
            key_valid = cache.valid[:, : s0 + T]
        else:
            key_valid = valid
        qi = torch.arange(s0, s0 + T, device=tokens.device)[:, None]
        kj = torch.arange(s0 + T, device=tokens.device)[None, :]
        mask = ((kj <= qi)[None] & key_valid[:, None, :]) | (kj == qi)[None]  # (B, T, S)
        mask = mask[:, None]  # (B, 1, T, S)
        cos, sin = rope_cos_sin(positions, self.cfg.d_model // self.cfg.n_heads, self.cfg.rope_base)
        x = self.emb(tokens)
        hidden = []
        for i, blk in enumerate(self.blocks):
            x = blk(x, cos, sin, mask, cache, i)
            if return_hidden:
                hidden.append(x)
        if cache is not None:
            cache.length = s0 + T
        logits = self.ln_f(x) @ self.emb.weight.T  # tied embeddings
        return (logits, hidden) if return_hidden else logits

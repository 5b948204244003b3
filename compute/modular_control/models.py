"""Universal controllers over limb tokens: MLP, MetaMorph, Amorpheus, ModuMorph and ModRec (the paper's method).

Every policy maps a padded robot (B, N) of limb inputs x_i = [o_i, a^i_{t−1}, c_i ⊙ visible] to per-limb action
means μ_i, a state-independent log-std and a value V from a masked mean pool (spec §2).

* ``mlp``        — concatenated padded limb inputs → MLP (fixed N_MAX-limb input).
* ``metamorph``  — token_i = Linear(x_i) + learned DFS position embedding → Transformer → per-limb decoder.
* ``amorpheus``  — the same without position embedding (permutation-equivariant).
* ``modumorph``  — a hypernetwork on the visible context generates each limb's embedding and decoder weights;
                   "fixed attention": queries and keys from the context embedding only, values from observations.
* ``modrec``     — the paper's modular recurrence: h^i_t = GRU([W_o o^i_t, a^i_{t−1}, W_c c⁺_i], h^i_{t−1}),
                   one GRU shared by all limbs, then self-attention over {h^i_t} without position embedding,
                   then the per-limb decoder.  ``order="attn_then_rnn"`` swaps the two (design option).
Ablation flags (E4): ``rnn`` ("none"/"before"/"after"), ``attn`` (off = feed-forward blocks only), ``use_ctx``.

Attention is ``scaled_dot_product_attention`` with an additive −inf padding mask (spec: ~7× faster on CPU than
``nn.TransformerEncoder`` with ``src_key_padding_mask``); tests check it against ``nn.MultiheadAttention``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from compute.modular_control.morph import CTX_DIM, N_MAX, OBS_DIM, all_morphs, context

ARCHS = ("mlp", "metamorph", "amorpheus", "modumorph", "modrec")
IN_DIM = OBS_DIM + 1 + CTX_DIM


@dataclass(frozen=True)
class ModelConfig:
    """Shared sizes (spec §2: d = 64, 3 layers, 2 heads, FF 128)."""

    arch: str = "modrec"
    d: int = 64
    layers: int = 3
    heads: int = 2
    ff: int = 128
    n_max: int = N_MAX
    order: str = "rnn_then_attn"  # modrec only: or "attn_then_rnn"
    attn: bool = True  # ablation: attention on/off
    recurrent: bool = True  # ablation (modrec): GRU on/off
    use_ctx: bool = True  # ablation: context input on/off
    log_std_init: float = -0.5


@lru_cache(maxsize=1)
def context_stats() -> tuple[np.ndarray, np.ndarray]:
    """Mean and std of every context field over the 38 unrandomised SMP robots (fixed input normalisation)."""
    c = np.concatenate([context(m) for m in all_morphs()])
    return c.mean(0).astype(np.float32), np.maximum(c.std(0), 1e-3).astype(np.float32)


class MHA(nn.Module):
    """Multi-head self-attention with SDPA.  ``bias``: (B, 1, 1, N) additive mask (0 or −inf)."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, qk: torch.Tensor | None = None) -> torch.Tensor:
        b, n, d = x.shape
        h = self.heads
        q, k, v = self.qkv(x).split(d, dim=-1)
        if qk is not None:  # fixed attention (ModuMorph): queries and keys from the context embedding
            q, k, _ = self.qkv(qk).split(d, dim=-1)
        q, k, v = (t.view(b, n, h, d // h).transpose(1, 2) for t in (q, k, v))  # (B, h, N, d/h)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.out(y.transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    """Pre-norm Transformer block; with ``attn=False`` only the feed-forward half (ablation)."""

    def __init__(self, d: int, heads: int, ff: int, attn: bool = True) -> None:
        super().__init__()
        self.use_attn = attn
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = MHA(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, ff), nn.ReLU(), nn.Linear(ff, d))

    def forward(self, x: torch.Tensor, bias: torch.Tensor, qk: torch.Tensor | None = None) -> torch.Tensor:
        if self.use_attn:
            x = x + self.attn(self.ln1(x), bias, None if qk is None else self.ln1(qk))
        return x + self.mlp(self.ln2(x))


def padding_bias(mask: torch.Tensor) -> torch.Tensor:
    """(B, N) bool valid → (B, 1, 1, N) additive mask: 0 for valid keys, −inf for padding."""
    bias = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device)
    return bias.masked_fill(~mask, float("-inf"))[:, None, None, :]


def masked_mean(z: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of (B, N, d) over valid limbs."""
    m = mask.float().unsqueeze(-1)
    return (z * m).sum(1) / m.sum(1).clamp_min(1.0)


class Policy(nn.Module):
    """All architectures behind one interface (see module docstring).

    ``forward(obs, ctx, prev_a, mask, h0, reset)`` takes sequences: obs (L, B, N, OBS_DIM), ctx (L, B, N, CTX_DIM),
    prev_a (L, B, N), mask (L, B, N) bool, h0 (B, N, d), reset (L, B) bool (zero the state before step l), and
    returns μ (L, B, N), V (L, B), h_L (B, N, d) and the per-limb features (L, B, N, d) used by the probe.
    """

    def __init__(self, cfg: ModelConfig, visible: np.ndarray) -> None:
        super().__init__()
        if cfg.arch not in ARCHS:
            raise ValueError(f"unknown arch {cfg.arch!r}")
        self.cfg = cfg
        d = cfg.d
        mean, std = context_stats()
        vis = torch.as_tensor(np.asarray(visible, dtype=np.float32)) * float(cfg.use_ctx)
        self.register_buffer("ctx_mean", torch.as_tensor(mean))
        self.register_buffer("ctx_std", torch.as_tensor(std))
        self.register_buffer("visible", vis)
        self.log_std = nn.Parameter(torch.tensor(cfg.log_std_init))
        self.recurrent = cfg.arch == "modrec" and cfg.recurrent
        a = cfg.arch
        if a == "mlp":
            self.mlp = nn.Sequential(
                nn.Linear(cfg.n_max * IN_DIM, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, d)
            )
            self.mu_head = nn.Linear(d, cfg.n_max)
        else:
            if a == "modumorph":
                self.ctx_enc = nn.Sequential(nn.Linear(CTX_DIM, d), nn.ReLU(), nn.Linear(d, d))
                self.hyper_in = nn.Linear(d, (OBS_DIM + 1) * d)  # per-limb embedding weights
                self.hyper_dec = nn.Linear(d, d * 32)  # per-limb decoder weights
                self.dec_out = nn.Linear(32, 1)
            elif a == "modrec":
                self.w_o = nn.Linear(OBS_DIM, d // 2)
                self.w_c = nn.Linear(CTX_DIM, d // 2)
                if self.recurrent and cfg.order == "attn_then_rnn":
                    self.ff_in = nn.Linear(d + 1, d)
                    self.gru = nn.GRUCell(d, d)
                elif self.recurrent:
                    self.gru = nn.GRUCell(d + 1, d)
                else:
                    self.ff_in = nn.Linear(d + 1, d)
            else:
                self.embed = nn.Linear(IN_DIM, d)
            if a == "metamorph":
                self.pos = nn.Parameter(torch.zeros(cfg.n_max, d))
                nn.init.normal_(self.pos, std=0.02)
            self.blocks = nn.ModuleList(Block(d, cfg.heads, cfg.ff, attn=cfg.attn) for _ in range(cfg.layers))
            self.ln_f = nn.LayerNorm(d)
            if a != "modumorph":
                self.decoder = nn.Sequential(nn.Linear(d, 64), nn.ReLU(), nn.Linear(64, 1))
        self.value = nn.Sequential(nn.Linear(d, 64), nn.Tanh(), nn.Linear(64, 1))

    # -- helpers ------------------------------------------------------------------------------
    def initial_state(self, batch: int) -> torch.Tensor:
        return torch.zeros(batch, self.cfg.n_max, self.cfg.d if self.recurrent else 0)

    def _ctx(self, ctx: torch.Tensor) -> torch.Tensor:
        return (ctx - self.ctx_mean) / self.ctx_std * self.visible

    def _attend(self, z: torch.Tensor, mask: torch.Tensor, qk: torch.Tensor | None = None) -> torch.Tensor:
        bias = padding_bias(mask)
        for blk in self.blocks:
            z = blk(z, bias, qk)
        return self.ln_f(z)

    # -- forward ------------------------------------------------------------------------------
    def forward(
        self,
        obs: torch.Tensor,
        ctx: torch.Tensor,
        prev_a: torch.Tensor,
        mask: torch.Tensor,
        h0: torch.Tensor,
        reset: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        L, B, N, _ = obs.shape
        c = self._ctx(ctx)
        m = mask.reshape(L * B, N)
        a = self.cfg.arch
        flat = lambda t: t.reshape(L * B, *t.shape[2:])  # noqa: E731 - (L, B, ...) → (L·B, ...)
        mf = m.unsqueeze(-1).float()
        if a == "mlp":
            x = torch.cat([obs, prev_a.unsqueeze(-1), c], -1)
            x = flat(x) * mf
            z_pool = self.mlp(x.reshape(L * B, -1))
            mu = self.mu_head(z_pool)
            feats = z_pool.unsqueeze(1).expand(L * B, N, -1)
            v = self.value(z_pool).squeeze(-1)
            return mu.view(L, B, N), v.view(L, B), h0, feats.reshape(L, B, N, -1)
        if a == "modumorph":
            e = self.ctx_enc(flat(c))  # (LB, N, d)
            w_in = self.hyper_in(e).view(L * B, N, OBS_DIM + 1, -1)
            x = torch.cat([flat(obs), flat(prev_a).unsqueeze(-1)], -1)
            z = torch.relu(torch.einsum("bnk,bnkd->bnd", x, w_in))
            z = self._attend(z, m, qk=e)
            w_dec = self.hyper_dec(e).view(L * B, N, self.cfg.d, 32)
            mu = self.dec_out(torch.relu(torch.einsum("bnd,bndk->bnk", z, w_dec))).squeeze(-1)
            v = self.value(masked_mean(z, m)).squeeze(-1)
            return mu.view(L, B, N), v.view(L, B), h0, z.view(L, B, N, -1)
        h = h0
        if a == "modrec":
            u = torch.cat([self.w_o(obs), prev_a.unsqueeze(-1), self.w_c(c)], -1)  # (L, B, N, d+1)
            if not self.recurrent:
                z = torch.relu(self.ff_in(flat(u)))
                z = self._attend(z, m)
            elif self.cfg.order == "rnn_then_attn":
                hs = []
                for t in range(L):
                    h = h * (~reset[t]).float()[:, None, None]
                    h = self.gru(u[t].reshape(B * N, -1), h.reshape(B * N, -1)).view(B, N, -1)
                    hs.append(h)
                z = self._attend(torch.stack(hs).reshape(L * B, N, -1), m)
            else:  # attn_then_rnn: tokens attend first, then the shared GRU runs over each limb's attended feature
                y = self._attend(torch.relu(self.ff_in(flat(u))), m)
                y = y.view(L, B, N, -1)
                hs = []
                for t in range(L):
                    h = h * (~reset[t]).float()[:, None, None]
                    h = self.gru(y[t].reshape(B * N, -1), h.reshape(B * N, -1)).view(B, N, -1)
                    hs.append(h)
                z = torch.stack(hs).reshape(L * B, N, -1)
        else:
            z = torch.relu(self.embed(flat(torch.cat([obs, prev_a.unsqueeze(-1), c], -1))))
            if a == "metamorph":
                z = z + self.pos[:N]
            z = self._attend(z, m)
        mu = self.decoder(z).squeeze(-1)
        v = self.value(masked_mean(z, m)).squeeze(-1)
        return mu.view(L, B, N), v.view(L, B), h, z.view(L, B, N, -1)


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())

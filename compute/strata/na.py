"""Local 3D neighbourhood attention (NA) in pure torch: a dense masked path and a gather path.

Window rule of NATTEN (SHI-Labs): along each axis of length n with kernel k (≤ n), token i attends to
[start, start + k) with start = clamp(i − ⌊k/2⌋, 0, n − k), so windows shift inward at the borders.
natten's CPU backward is not implemented, hence these fallbacks; both give identical results.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F


def window_starts(n: int, k: int) -> torch.Tensor:
    """start_i = clamp(i − ⌊k/2⌋, 0, n − k) for i in [0, n); k is clipped to n."""
    k = min(k, n)
    return torch.clamp(torch.arange(n) - k // 2, 0, n - k)


@functools.lru_cache(maxsize=64)
def neighbour_index(shape: tuple[int, ...], kernel: tuple[int, ...]) -> torch.Tensor:
    """(N, K) flat indices of each token's neighbours on a grid of ``shape`` (row-major), K = Π min(k_d, n_d)."""
    per_axis = []
    for n, k in zip(shape, kernel, strict=False):
        k = min(k, n)
        per_axis.append(window_starts(n, k)[:, None] + torch.arange(k)[None, :])  # (n, k)
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    idx = torch.zeros((1, 1), dtype=torch.long)
    for d, w in enumerate(per_axis):  # outer sum over axes: (N_so_far·n_d, K_so_far·k_d)
        a = idx[:, None, :, None]
        b = (w * strides[d])[None, :, None, :]
        idx = (a + b).reshape(idx.shape[0] * w.shape[0], idx.shape[1] * w.shape[1])
    return idx


@functools.lru_cache(maxsize=64)
def neighbour_mask(shape: tuple[int, ...], kernel: tuple[int, ...]) -> torch.Tensor:
    """(N, N) boolean mask, True where key j is in query i's neighbourhood."""
    idx = neighbour_index(shape, kernel)
    n = idx.shape[0]
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask.scatter_(1, idx, True)
    return mask


def na_dense(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, shape: tuple[int, ...], kernel: tuple[int, ...]):
    """Dense SDPA with the neighbourhood mask.  q, k, v: (B, heads, N, hd) → (B, heads, N, hd)."""
    return F.scaled_dot_product_attention(q, k, v, attn_mask=neighbour_mask(shape, kernel).to(q.device))


def na_gather(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, shape: tuple[int, ...], kernel: tuple[int, ...]):
    """Gather each token's K neighbours, softmax over K.  Memory O(N·K) instead of O(N²)."""
    idx = neighbour_index(shape, kernel).to(q.device)  # (N, K)
    kn = k[:, :, idx]  # (B, h, N, K, hd)
    vn = v[:, :, idx]
    logits = torch.einsum("bhnd,bhnkd->bhnk", q, kn) * q.shape[-1] ** -0.5
    return torch.einsum("bhnk,bhnkd->bhnd", logits.softmax(-1), vn)


def neighbourhood_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    shape: tuple[int, ...],
    kernel: tuple[int, ...],
    impl: str = "auto",
) -> torch.Tensor:
    """Pick the path: dense up to 1,024 tokens (fast SDPA), gather beyond (memory)."""
    n = q.shape[2]
    if impl == "auto":
        impl = "dense" if n <= 1024 else "gather"
    return na_dense(q, k, v, shape, kernel) if impl == "dense" else na_gather(q, k, v, shape, kernel)

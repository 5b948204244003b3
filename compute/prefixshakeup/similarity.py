"""All-pairs Jaccard similarity of users' record sets (the "kernel-accelerated" step, spec §2 Alleviator).

J(u, v) = |R_u ∩ R_v| / |R_u ∪ R_v|, with every intersection from one product X·Xᵀ of the binary
user × record incidence matrix X (torch sparse matmul, on the GPU when present).  Two references:
packed bitsets with ``np.bitwise_count`` popcounts, and Python set loops.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch


def incidence(records: list[list[int]], n_templates: int) -> np.ndarray:
    """Dense bool incidence [n_users, M]."""
    X = np.zeros((len(records), n_templates), dtype=bool)
    for u, rs in enumerate(records):
        X[u, rs] = True
    return X


def jaccard_matmul(records: list[list[int]], n_templates: int, device: str = "cpu") -> np.ndarray:
    """J = I / (s_u + s_v − I) with I = X·Xᵀ from a sparse COO X (float32 counts are exact below 2²⁴)."""
    rows = np.repeat(np.arange(len(records)), [len(r) for r in records])
    cols = np.concatenate([np.asarray(r, dtype=np.int64) for r in records]) if records else np.zeros(0, np.int64)
    idx = torch.from_numpy(np.stack([rows, cols]).astype(np.int64))
    shape = (len(records), n_templates)
    X = torch.sparse_coo_tensor(idx, torch.ones(len(cols)), shape, device=device, check_invariants=False).coalesce()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
        inter = torch.sparse.mm(X, X.t().coalesce()).to_dense()  # (n, n)
    size = torch.diagonal(inter)
    union = size[:, None] + size[None, :] - inter
    J = torch.where(union > 0, inter / union.clamp(min=1), torch.zeros_like(inter))
    return J.cpu().numpy().astype(np.float64)


def jaccard_bitset(records: list[list[int]], n_templates: int) -> np.ndarray:
    """Same J from packed 64-bit bitsets and popcounts (np.bitwise_count, numpy ≥ 2)."""
    B = np.packbits(incidence(records, n_templates), axis=1, bitorder="little")
    pad = (-B.shape[1]) % 8
    B = np.pad(B, ((0, 0), (0, pad))).view(np.uint64)  # (n, words)
    size = np.bitwise_count(B).sum(1).astype(np.int64)
    n = len(records)
    inter = np.empty((n, n), dtype=np.int64)
    for u in range(n):
        inter[u] = np.bitwise_count(B[u] & B).sum(1)
    union = size[:, None] + size[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1), 0.0)


def jaccard_sets(records: list[list[int]]) -> np.ndarray:
    """Reference: Python set intersections, O(n²·K)."""
    sets = [set(r) for r in records]
    n = len(sets)
    J = np.zeros((n, n))
    for u in range(n):
        for v in range(u, n):
            uni = len(sets[u] | sets[v])
            J[u, v] = J[v, u] = len(sets[u] & sets[v]) / uni if uni else 0.0
    return J

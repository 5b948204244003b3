"""Synthetic graph-classification data sets with ground-truth explanation edges, as fixed-size dense tensors.

BA-2Motifs (PGExplainer, NeurIPS 2020): a Barabási–Albert base BA(20, 1) with a house (class 0) or a five-cycle
(class 1) attached by one edge; 25 nodes, features x = 0.1·1₁₀.  The house has 6 edges, the cycle 5, so a sum
readout can classify by counting edges: ``equalize_edges`` adds one random base edge to cycle graphs (design
choice of the spec, switchable).

SynMUTAG (design choice standing in for MUTAG, which downloads): 20-atom molecule-like graphs — a 17-carbon
tree skeleton with one ring closure and an N, O, O group bonded as nitro N(O)₂ (class 1) or as a chain N–O–O
(class 0); the group's 3 edges are the ground truth.  Same atoms and edge count in both classes, so neither
features nor counts nor the rest of the graph reveal the label.  Features: one-hot C/N/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class GraphSet:
    """A batch of fixed-size undirected graphs.  A and gt are symmetric with zero diagonal."""

    name: str
    X: torch.Tensor  # (B, N, F) node features
    A: torch.Tensor  # (B, N, N) 0/1 adjacency
    y: torch.Tensor  # (B,) labels
    gt: torch.Tensor  # (B, N, N) 0/1 ground-truth explanation edges (subset of A)
    explanation_size: int  # edges in a typical explanation (top-k for fidelity)

    def __len__(self) -> int:
        return int(self.y.shape[0])

    def subset(self, idx: torch.Tensor | np.ndarray | list[int]) -> GraphSet:
        idx = torch.as_tensor(idx, dtype=torch.long)
        return GraphSet(self.name, self.X[idx], self.A[idx], self.y[idx], self.gt[idx], self.explanation_size)


def _add(A: np.ndarray, u: int, v: int) -> None:
    A[u, v] = A[v, u] = 1.0


def ba_tree(rng: np.random.Generator, n: int) -> np.ndarray:
    """BA(n, 1): each new node attaches to one existing node with probability ∝ degree (a random tree)."""
    A = np.zeros((n, n), dtype=np.float32)
    _add(A, 0, 1)
    for v in range(2, n):
        deg = A[:v, :v].sum(1)
        u = int(rng.choice(v, p=deg / deg.sum()))
        _add(A, u, v)
    return A


HOUSE_EDGES = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 0), (4, 1)]  # square 0-1-2-3 + roof 4
CYCLE5_EDGES = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]


def ba_2motifs(n_graphs: int = 1000, seed: int = 0, equalize_edges: bool = True, n_base: int = 20) -> GraphSet:
    """BA-2Motifs: half houses (label 0), half five-cycles (label 1), each glued to BA(n_base, 1) by one edge."""
    rng = np.random.default_rng(seed)
    N = n_base + 5
    A = np.zeros((n_graphs, N, N), dtype=np.float32)
    gt = np.zeros_like(A)
    y = np.zeros(n_graphs, dtype=np.int64)
    for g in range(n_graphs):
        label = int(g >= n_graphs // 2)
        y[g] = label
        A[g, :n_base, :n_base] = ba_tree(rng, n_base)
        for u, v in HOUSE_EDGES if label == 0 else CYCLE5_EDGES:
            _add(A[g], n_base + u, n_base + v)
            _add(gt[g], n_base + u, n_base + v)
        _add(A[g], int(rng.integers(n_base)), n_base + int(rng.integers(5)))  # attachment edge: not ground truth
        if label == 1 and equalize_edges:  # cycle has one edge fewer than the house: add a random base edge
            while True:
                u, v = rng.choice(n_base, size=2, replace=False)
                if A[g, u, v] == 0:
                    _add(A[g], int(u), int(v))
                    break
    X = np.full((n_graphs, N, 10), 0.1, dtype=np.float32)
    return GraphSet("ba_2motifs", torch.tensor(X), torch.tensor(A), torch.tensor(y), torch.tensor(gt), 6)


def _free_carbon(rng: np.random.Generator, A: np.ndarray, carbons: int, exclude: set[int] = frozenset()) -> int:
    deg = A[:carbons].sum(1)
    ok = [c for c in range(carbons) if deg[c] < 3 and c not in exclude]
    return int(rng.choice(ok))


def syn_mutag(n_graphs: int = 600, seed: int = 0, n_carbons: int = 17) -> GraphSet:
    """SynMUTAG: carbon skeleton + a C–N group with two O atoms, bonded as a nitro group N(O)₂ (label 1) or as a
    chain N–O–O (label 0).  Both classes have the same atoms and edge count, and removing the group's 3 edges
    (the ground truth) leaves identical-looking graphs, so only the group's topology carries the label."""
    rng = np.random.default_rng(seed)
    N = n_carbons + 3
    A = np.zeros((n_graphs, N, N), dtype=np.float32)
    gt = np.zeros_like(A)
    X = np.zeros((n_graphs, N, 3), dtype=np.float32)  # one-hot C, N, O
    y = np.zeros(n_graphs, dtype=np.int64)
    n_, o1, o2 = n_carbons, n_carbons + 1, n_carbons + 2
    for g in range(n_graphs):
        label = int(g >= n_graphs // 2)
        y[g] = label
        a = A[g]
        for v in range(1, n_carbons):  # random carbon tree with valence headroom
            deg = a[:v].sum(1)
            u = int(rng.choice([c for c in range(v) if deg[c] < 3]))
            _add(a, u, v)
        while True:  # one ring closure between two carbons
            u, v = rng.choice(n_carbons, size=2, replace=False)
            if a[u, v] == 0 and a[u].sum() < 3 and a[v].sum() < 3:
                _add(a, int(u), int(v))
                break
        X[g, :n_carbons, 0] = 1.0
        X[g, n_, 1] = 1.0
        X[g, [o1, o2], 2] = 1.0
        c = _free_carbon(rng, a, n_carbons)
        edges = [(c, n_), (n_, o1), (n_, o2)] if label == 1 else [(c, n_), (n_, o1), (o1, o2)]
        for u, v in edges:
            _add(a, u, v)
            _add(gt[g], u, v)
    return GraphSet("syn_mutag", torch.tensor(X), torch.tensor(A), torch.tensor(y), torch.tensor(gt), 3)


DATASETS = {"ba_2motifs": ba_2motifs, "syn_mutag": syn_mutag}


def make_dataset(name: str, n_graphs: int, seed: int = 0, equalize_edges: bool = True) -> GraphSet:
    """Build a data set by name (BA-2Motifs or SynMUTAG)."""
    if name == "ba_2motifs":
        return ba_2motifs(n_graphs, seed, equalize_edges)
    if name == "syn_mutag":
        return syn_mutag(n_graphs, seed)
    raise ValueError(f"unknown data set {name!r}")


def add_noise_edges(A: torch.Tensor, fraction: float, seed: int) -> torch.Tensor:
    """Robustness: add ⌊fraction·|E|⌋ random non-edges per graph (symmetric, no self-loops)."""
    if fraction <= 0:
        return A.clone()
    g = torch.Generator().manual_seed(seed)
    out = A.clone()
    N = A.shape[-1]
    iu = torch.triu_indices(N, N, 1)
    for b in range(A.shape[0]):
        k = int(fraction * float(A[b].sum()) / 2)
        free = (out[b, iu[0], iu[1]] == 0).nonzero().flatten()
        pick = free[torch.randperm(len(free), generator=g)[:k]]
        out[b, iu[0, pick], iu[1, pick]] = 1.0
        out[b, iu[1, pick], iu[0, pick]] = 1.0
    return out

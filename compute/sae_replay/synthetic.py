"""Synthetic activations with known sparse ground-truth features (design choice of the spec, §2.3).

    x = Σ_i a_i f_i + σ·ξ,   f_i unit directions in ℝ^d (n_feat > d: superposition),
    P(feature i fires) = p_i = max(p_min, p_head/(i+1)),  |a_i| = |1 + 0.1·N(0,1)|,  ξ ~ N(0, I_d).

Optional hierarchies for exact absorption: a parent feature with c children; a child can only fire with its
parent (child ⇒ parent) and at most one child fires at a time (children are mutually exclusive).  Given the
parent fires, child j fires with probability q (j = 1..c), none with probability 1 − c·q.  Hierarchies use the
last features; parents get firing probability ``parent_p``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class Hierarchy:
    parent: int  # feature index of the parent
    children: list[int]  # feature indices of its mutually exclusive children
    q: float  # P(child j fires | parent fires)


class SparseFeatureGenerator:
    """Draws activations and their true codes; every draw uses its own torch.Generator stream."""

    def __init__(
        self,
        d: int = 64,
        n_feat: int = 512,
        p_head: float = 0.16,
        p_min: float = 0.01,
        noise: float = 0.01,
        n_hier: int = 0,
        n_children: int = 3,
        child_q: float = 0.25,
        parent_p: float = 0.05,
        seed: int = 0,
    ) -> None:
        if n_hier * (1 + n_children) > n_feat:
            raise ValueError("hierarchies need more features than n_feat")
        rng = np.random.default_rng(seed)
        f = rng.standard_normal((n_feat, d))
        self.features = torch.tensor(f / np.linalg.norm(f, axis=1, keepdims=True), dtype=torch.float32)  # (n, d)
        self.d, self.n_feat, self.noise = d, n_feat, noise
        self.base_p = np.maximum(p_min, p_head / (np.arange(n_feat) + 1.0))  # p_i
        # hierarchies take features from the tail (rare features): parents are the first of each block
        self.hierarchies: list[Hierarchy] = []
        start = n_feat - n_hier * (1 + n_children)
        for h in range(n_hier):
            par = start + h * (1 + n_children)
            self.hierarchies.append(Hierarchy(par, list(range(par + 1, par + 1 + n_children)), child_q))
            self.base_p[par] = parent_p  # parents fire often enough for absorption to be measurable
        self.rates = self.base_p.copy()  # marginal firing probability of every feature
        for h in self.hierarchies:
            for c in h.children:
                self.rates[c] = self.base_p[h.parent] * h.q
        self._indep = np.ones(n_feat, dtype=bool)
        for h in self.hierarchies:
            self._indep[h.children] = False

    def sample(self, n: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """(x, a): activations (n, d) and true codes (n, n_feat), a_i ≥ 0."""
        p = torch.tensor(self.base_p, dtype=torch.float32)
        on = torch.rand(n, self.n_feat, generator=gen) < p  # independent features and parents
        on[:, ~torch.tensor(self._indep)] = False
        for h in self.hierarchies:
            u = torch.rand(n, generator=gen)
            par = on[:, h.parent]
            for j, c in enumerate(h.children):
                on[:, c] = par & (u >= j * h.q) & (u < (j + 1) * h.q)
        mag = (1.0 + 0.1 * torch.randn(n, self.n_feat, generator=gen)).abs()
        a = mag * on.to(torch.float32)
        x = a @ self.features + self.noise * torch.randn(n, self.d, generator=gen)
        return x, a


class GeneratorStream:
    """Fresh-arm source: an endless stream of new draws (never a stored pool)."""

    def __init__(self, gen: SparseFeatureGenerator, seed: int) -> None:
        self.gen = gen
        self.g = torch.Generator().manual_seed(seed)

    def next(self, n: int) -> torch.Tensor:
        return self.gen.sample(n, self.g)[0]

"""Activation sources behind one interface: fresh streams, stored pools, held-out sets, one normalization.

Normalization (spec §6): one scale s with E‖s·x‖ = √d and one mean, estimated once on a calibration sample of
4096 training rows and used by every arm (design choice: the mean also initializes b_dec).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from compute.sae_replay.synthetic import GeneratorStream, SparseFeatureGenerator


@dataclass
class Source:
    """What the training loop and the metrics need from an activation source."""

    name: str
    d: int
    scale: float
    mean: torch.Tensor  # (d,) of normalized data
    x_eval: torch.Tensor  # (n_eval, d) normalized held-out activations
    fresh: Callable[[int], Callable[[int], torch.Tensor]]  # seed -> next_batch(n)
    pool: Callable[[int, int], torch.Tensor]  # (U, seed) -> (U, d) normalized stored pool
    max_fresh: int | None = None  # most unique training rows available (None: a generator)
    extras: dict[str, Any] = field(default_factory=dict)  # ground truth, labels for probing


def synthetic_source(
    d: int, n_feat: int, noise: float, n_hier: int, n_eval: int, seed: int, n_calib: int = 4096
) -> Source:
    """The sparse-feature generator: fresh = new draws, pool = U draws kept, held-out = a separate seed stream."""
    gen = SparseFeatureGenerator(d=d, n_feat=n_feat, noise=noise, n_hier=n_hier, seed=seed)
    base = 1_000_003 * (seed + 1)
    x_cal, _ = gen.sample(n_calib, torch.Generator().manual_seed(base + 1))
    scale = float(d**0.5 / x_cal.norm(dim=1).mean())
    x_eval, a_eval = gen.sample(n_eval, torch.Generator().manual_seed(base + 2))

    def fresh(s: int) -> Callable[[int], torch.Tensor]:
        stream = GeneratorStream(gen, base + 100 + s)
        return lambda n: stream.next(n) * scale

    def pool(U: int, s: int) -> torch.Tensor:
        return gen.sample(U, torch.Generator().manual_seed(base + 10_000 + s))[0] * scale

    return Source(
        name="synthetic",
        d=d,
        scale=scale,
        mean=(x_cal * scale).mean(0),
        x_eval=x_eval * scale,
        fresh=fresh,
        pool=pool,
        extras={"generator": gen, "a_eval": a_eval},
    )


def array_source(
    name: str,
    train: np.ndarray,
    heldout: np.ndarray,
    seed: int,
    extras: dict[str, Any] | None = None,
    n_calib: int = 4096,
) -> Source:
    """A cached activation array (rows, d), fp16 on disk, trained in fp32.

    Training rows are shuffled across documents once per seed; the fresh arm walks that order once (each row used
    once), a pool of U rows is a prefix of another shuffle.  Held-out rows come from disjoint documents.
    """
    n, d = train.shape
    rng = np.random.default_rng(seed)
    cal = torch.from_numpy(np.asarray(train[np.sort(rng.choice(n, min(n_calib, n), replace=False))], np.float32))
    scale = float(d**0.5 / cal.norm(dim=1).mean())

    def rows(idx: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.asarray(train[np.sort(idx)], np.float32)) * scale

    def fresh(s: int) -> Callable[[int], torch.Tensor]:
        order = np.random.default_rng(seed * 7919 + s).permutation(n)
        pos = [0]

        def nxt(b: int) -> torch.Tensor:
            if pos[0] + b > n:
                raise RuntimeError(f"fresh arm needs more than the {n} cached rows: lower T or grow the cache")
            idx = order[pos[0] : pos[0] + b]
            pos[0] += b
            return torch.from_numpy(np.asarray(train[idx], np.float32)) * scale

        return nxt

    def pool(U: int, s: int) -> torch.Tensor:
        if U > n:
            raise RuntimeError(f"pool of {U} rows exceeds the {n} cached rows")
        return rows(np.random.default_rng(seed * 104729 + s).permutation(n)[:U])

    return Source(
        name=name,
        d=d,
        scale=scale,
        mean=(cal * scale).mean(0),
        x_eval=torch.from_numpy(np.asarray(heldout, np.float32)) * scale,
        fresh=fresh,
        pool=pool,
        max_fresh=n,
        extras=extras or {},
    )

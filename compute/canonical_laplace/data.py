"""Data sets generated in code (no downloads).

* ``sinusoid``: y = sin x + 0.3ε, x ~ U(0, 8), optional gap (x ∈ [3, 5] removed); 1 input, 1 output.
* ``moons``: two interleaving half circles with Gaussian noise 0.2 — the construction of
  ``sklearn.datasets.make_moons`` re-implemented (sklearn is not a dependency); 2 inputs, 2 classes.
* ``tabular``: 8 features x ~ U(−1, 1)⁸, y = linear + pairwise interactions + sin term + 0.3ε, with
  coefficients drawn from a fixed seed (the *task* is fixed; the sample depends on the run seed).

Each returns train, in-range test and out-of-range test splits (the latter for held-out quality).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .model import DTYPE

DATASETS = ("sinusoid", "moons", "tabular")
TABULAR_TASK_SEED = 20260


@dataclass
class Split:
    x: Tensor  # (N, d) float64
    y: Tensor  # (N, 1) float64 for regression, (N,) int64 for classification


@dataclass
class DataBundle:
    name: str
    likelihood: str  # "regression" | "classification"
    d_in: int
    d_out: int
    train: Split
    test_in: Split
    test_out: Split
    probe_line: tuple[np.ndarray, np.ndarray]  # (x0, direction): probe inputs x0 + u·direction
    probe_range: tuple[float, float]  # range of u for the predictive bands
    probe_point: float  # u of the reported predictive sd ("x = 10" for the sinusoid)


def _sinusoid_x(rng: np.random.Generator, n: int, lo: float, hi: float, gap: bool) -> np.ndarray:
    xs: list[float] = []
    while len(xs) < n:
        x = rng.uniform(lo, hi, size=2 * n)
        if gap:
            x = x[(x < 3.0) | (x > 5.0)]
        xs.extend(x.tolist())
    return np.array(xs[:n])


def _moons(rng: np.random.Generator, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """make_moons: outer (cos t, sin t), inner (1 − cos t, ½ − sin t), t ∈ linspace(0, π), + N(0, noise²)."""
    n_out = n // 2
    n_in = n - n_out
    t_out, t_in = np.linspace(0, math.pi, n_out), np.linspace(0, math.pi, n_in)
    x = np.vstack([np.c_[np.cos(t_out), np.sin(t_out)], np.c_[1 - np.cos(t_in), 0.5 - np.sin(t_in)]])
    y = np.r_[np.zeros(n_out, dtype=np.int64), np.ones(n_in, dtype=np.int64)]
    x = x + noise * rng.standard_normal(x.shape)
    perm = rng.permutation(n)
    return x[perm], y[perm]


def _tabular_fn(x: np.ndarray) -> np.ndarray:
    task = np.random.default_rng(TABULAR_TASK_SEED)
    a = task.normal(0, 1, size=8)
    pairs = [(0, 1), (2, 3), (4, 5), (1, 6)]
    c = task.normal(0, 1.5, size=len(pairs))
    y = x @ a / math.sqrt(8)
    for (i, j), cij in zip(pairs, c, strict=False):
        y = y + cij * x[:, i] * x[:, j]
    return y + np.sin(2 * x[:, 7])


def make_data(
    name: str, n_train: int, noise: float, seed: int, gap: bool = False, n_test: int = 500, device: str = "cpu"
) -> DataBundle:
    """Generate train / in-range test / out-of-range test splits of data set ``name``."""
    rng = np.random.default_rng(seed + 7919)

    def t(a: np.ndarray) -> Tensor:
        return torch.as_tensor(a, dtype=DTYPE, device=device)

    if name == "sinusoid":

        def split(x: np.ndarray) -> Split:
            y = np.sin(x) + noise * rng.standard_normal(x.shape)
            return Split(t(x[:, None]), t(y[:, None]))

        x_tr = _sinusoid_x(rng, n_train, 0.0, 8.0, gap)
        x_in = _sinusoid_x(rng, n_test, 0.0, 8.0, False)
        x_out = np.r_[rng.uniform(-2.0, 0.0, n_test // 2), rng.uniform(8.0, 10.0, n_test - n_test // 2)]
        return DataBundle(
            name,
            "regression",
            1,
            1,
            split(x_tr),
            split(x_in),
            split(x_out),
            (np.zeros(1), np.ones(1)),
            (-2.0, 10.0),
            10.0,
        )
    if name == "moons":
        x_tr, y_tr = _moons(rng, n_train, noise)
        x_in, y_in = _moons(rng, n_test, noise)
        x_out, y_out = _moons(rng, n_test, 2.5 * noise)  # covariate shift: noisier moons

        def lab(a: np.ndarray) -> Tensor:
            return torch.as_tensor(a, dtype=torch.int64, device=device)

        return DataBundle(
            name,
            "classification",
            2,
            2,
            Split(t(x_tr), lab(y_tr)),
            Split(t(x_in), lab(y_in)),
            Split(t(x_out), lab(y_out)),
            (np.array([0.5, 0.25]), np.array([1.0, 0.0])),
            (-4.0, 4.0),
            4.0,
        )
    if name == "tabular":

        def split_tab(x: np.ndarray) -> Split:
            y = _tabular_fn(x) + noise * rng.standard_normal(len(x))
            return Split(t(x), t(y[:, None]))

        x_tr = rng.uniform(-1, 1, size=(n_train, 8))
        x_in = rng.uniform(-1, 1, size=(n_test, 8))
        x_out = rng.uniform(-1, 1, size=(n_test, 8))
        k = rng.integers(0, 8, size=n_test)
        x_out[np.arange(n_test), k] = rng.choice([-1, 1], size=n_test) * rng.uniform(1.0, 2.0, size=n_test)
        return DataBundle(
            name,
            "regression",
            8,
            1,
            split_tab(x_tr),
            split_tab(x_in),
            split_tab(x_out),
            (np.zeros(8), np.ones(8) / math.sqrt(8)),
            (-3.0, 3.0),
            3.0,
        )
    raise ValueError(f"unknown data set {name!r}; choose from {DATASETS}")

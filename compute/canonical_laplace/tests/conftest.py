"""Shared small fixtures: a trained 1-8-8-1 regression net and a 2-8-8-2 classifier (seconds on CPU)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from compute.canonical_laplace.data import DataBundle, make_data
from compute.canonical_laplace.model import MLP, init_params, parse_widths, train_map


@dataclass
class Net:
    data: DataBundle
    mlp: MLP
    theta: torch.Tensor
    sigma: float = 0.3


def _train(name: str, hidden: str, n: int, steps: int, seed: int = 0) -> Net:
    torch.set_num_threads(1)
    data = make_data(name, n, 0.3 if name != "moons" else 0.2, seed, n_test=50)
    mlp = parse_widths(data.d_in, hidden, data.d_out)
    gen = torch.Generator().manual_seed(seed)
    theta = train_map(mlp, init_params(mlp, gen), data.train.x, data.train.y, data.likelihood, steps)
    return Net(data, mlp, theta)


@pytest.fixture(scope="session")
def reg_net() -> Net:
    return _train("sinusoid", "8-8", 60, 400)


@pytest.fixture(scope="session")
def cls_net() -> Net:
    return _train("moons", "8-8", 60, 300)


@pytest.fixture
def gen() -> torch.Generator:
    return torch.Generator().manual_seed(123)

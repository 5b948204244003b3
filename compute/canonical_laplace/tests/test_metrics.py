"""Hand-computed held-out metrics: ECE (15 bins) and the probit predictive."""

from __future__ import annotations

import math

import torch

from compute.canonical_laplace.evidence import probit_probs
from compute.canonical_laplace.model import DTYPE
from compute.canonical_laplace.run import ece


def test_ece_hand_computed() -> None:
    # 10 points at confidence 0.8 with 8 correct: perfectly calibrated → 0
    probs = torch.tensor([[0.8, 0.2]] * 10, dtype=DTYPE)
    y = torch.tensor([0] * 8 + [1] * 2)
    assert abs(ece(probs, y)[0]) < 1e-12
    # half at confidence 0.9 (all correct), half at 0.6 (none correct): ½·|1 − 0.9| + ½·|0 − 0.6| = 0.35
    probs = torch.tensor([[0.9, 0.1]] * 5 + [[0.6, 0.4]] * 5, dtype=DTYPE)
    y = torch.tensor([0] * 5 + [1] * 5)
    assert abs(ece(probs, y)[0] - 0.35) < 1e-12


def test_probit_limits() -> None:
    f = torch.tensor([[2.0, -1.0]], dtype=DTYPE)
    zero = torch.zeros(1, 2, 2, dtype=DTYPE)
    assert torch.allclose(probit_probs(f, zero), torch.softmax(f, -1), rtol=1e-14)  # no uncertainty → softmax
    cov = torch.diag_embed(torch.tensor([[8 / math.pi * 3, 8 / math.pi * 3]], dtype=DTYPE))  # κ = 1/2
    assert torch.allclose(probit_probs(f, cov), torch.softmax(f / 2, -1), rtol=1e-14)

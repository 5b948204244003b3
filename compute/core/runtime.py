"""Seeding and device helpers shared by compute packages."""

from __future__ import annotations

import random

import numpy as np


def seed_everything(seed: int) -> np.random.Generator:
    """Seed python, numpy and (if importable) torch; return a numpy Generator for the run."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    try:
        import torch

        torch.manual_seed(seed)
    except ImportError:  # pragma: no cover - torch is a pinned dependency
        pass
    return np.random.default_rng(seed)


def resolve_device(device: str = "auto") -> str:
    """'auto' → 'cuda' when torch sees a GPU, else 'cpu'."""
    if device != "auto":
        return device
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:  # pragma: no cover
        return "cpu"

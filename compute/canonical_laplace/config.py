"""Config dataclasses mirroring the declared parameters of the three experiments.

``BaseConfig`` holds the shared knobs (data, network, MAP training, likelihood, curvature);
each experiment adds its own.  ``from_params`` ignores nothing silently: unknown keys raise.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass
class BaseConfig:
    dataset: str = "sinusoid"  # sinusoid | moons | tabular
    hidden: str = "32-32"  # hidden widths, e.g. "50" (1-50-1) or "32-32" (1-32-32-1)
    n_train: int = 150  # training points (spec: N = 150 sinusoid, 300 moons)
    noise: float = 0.3  # data noise (sinusoid/tabular ε scale; moons noise)
    gap: bool = False  # sinusoid: remove x ∈ [3, 5] from the training inputs
    sigma: float = 0.3  # Gaussian likelihood σ, identical for every method (orbit-invariant)
    train_steps: int = 2000  # full-batch Adam steps to the MAP
    lr: float = 1e-2  # Adam learning rate (cosine decay to lr/20)
    weight_decay: float = 1e-4  # MAP weight decay on ‖θ‖² (MAP only; the Laplace prior is tuned post hoc)
    curvature: str = "ggn"  # ggn (default) | hessian (clamped at 0 after whitening)
    family: str = "A"  # canonicalizer: A (γ-interpolated normal form) | B (ENorm min-norm)
    seed: int = 0
    device: str = "cpu"

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Any:
        names = {f.name for f in fields(cls)}
        unknown = set(params) - names
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown parameters {sorted(unknown)}")
        return cls(**params)


@dataclass
class InvarianceConfig(BaseConfig):
    """Experiment 1: evidence, λ* and predictive across R function-preserving rescalings."""

    n_rescalings: int = 8  # R random representatives besides the trained θ
    log10_scale_range: float = 1.0  # s = 10^u, u ~ U(±range): s ∈ [0.1, 10] by default
    gamma: float = 0.5  # γ of family A (ignored when select_gamma)
    select_gamma: bool = True  # choose (γ, λ) jointly by evidence on the γ grid, then refine
    layerwise: bool = True  # also run the layer-wise λ_l baseline
    n_gamma: int = 11  # γ grid {0, 0.1, …, 1} for the every-γ invariance sweep


@dataclass
class LandscapeConfig(BaseConfig):
    """Experiment 2: the (γ, λ) log-evidence landscape on three representatives."""

    n_gamma: int = 11  # γ grid over [0, 1]
    n_lambda: int = 81  # log-spaced λ grid over [1e-4, 1e4]
    log10_scale_range: float = 1.0


@dataclass
class HeldoutConfig(BaseConfig):
    """Experiment 3: held-out NLL / calibration of MAP, standard EB and canonical γ = ½ and γ*."""

    n_rescalings: int = 4  # representatives over which each method's held-out metrics are spread
    log10_scale_range: float = 1.0
    n_test: int = 500
    layerwise: bool = True

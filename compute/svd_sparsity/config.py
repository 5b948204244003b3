"""One config dataclass per experiment, mirroring the parameters declared in apps/svd_sparsity."""

from __future__ import annotations

from dataclasses import dataclass, field

from compute.core.config import FromParams as _FromParams
from compute.svd_sparsity.build import BuildConfig

# the two model builds an experiment can use (``model`` parameter); tests use "micro"
MODELS: dict[str, BuildConfig] = {
    "default": BuildConfig(),  # spec §2: 4 layers, d=256, d_ff=1024, 4 heads, context 256, BPE 4096
    "micro": BuildConfig(
        d_model=64,
        n_layers=2,
        n_heads=2,
        d_ff=256,
        context=64,
        vocab_size=512,
        steps=30,
        batch_size=4,
        warmup_steps=5,
        n_arith=100,
        n_docs=80,
    ),
}


@dataclass
class BuildModelConfig(_FromParams):
    """Build step: which model to train (or load) and cache."""

    model: str = "default"
    seed: int = 0


@dataclass
class PredictorConfig(_FromParams):
    """Experiment 1: rank × whitening → truncation loss, held-out recall / precision / density per layer."""

    model: str = "default"
    ranks: list[int] = field(default_factory=lambda: [8, 16, 32, 64, 128, 256])
    target_recall: float = 0.99
    n_cal: int = 65536  # calibration tokens (FFN inputs per layer)
    n_heldout: int = 16384  # held-out tokens for recall / precision / density
    density_budget: float = 1.5  # auto rank: smallest r whose calibration density ≤ budget × natural density
    eps_rel: float = 1e-6  # ridge ε = eps_rel · tr(XᵀX)/d
    seed: int = 0


@dataclass
class CalibrationConfig(_FromParams):
    """Experiment 2: target recall → held-out recall, density, PPL ratio, KL, top-1, arithmetic accuracy."""

    model: str = "default"
    target_recalls: list[float] = field(default_factory=lambda: [0.9, 0.95, 0.99, 0.999])
    granularity: str = "layer"  # layer | neuron
    recall_type: str = "plain"  # plain | weighted (CETT-like)
    rank: int = 0  # 0 = automatic per layer
    density_budget: float = 1.5
    n_cal: int = 65536
    n_eval: int = 8192  # held-out tokens for PPL / KL / top-1
    n_task: int = 100  # held-out arithmetic problems (0 = skip)
    seed: int = 0


@dataclass
class SpeedConfig(_FromParams):
    """Experiment 3: batch-1 decode speed, FFN-only and end to end, dense vs SVD-sparse vs oracle vs gate-first."""

    model: str = "default"
    mode: str = "both"  # scaled | trained | both
    d: int = 1024
    d_ff: int = 4096
    n_layers: int = 8
    densities: list[float] = field(default_factory=lambda: [0.1, 0.2, 0.4])
    rank: int = 128  # predictor rank of the scaled benchmark
    vocab: int = 4096  # lm_head size of the scaled end-to-end model
    n_tokens: int = 16  # decode tokens per trial
    trials: int = 3
    target_recall: float = 0.99  # trained mode: calibration of the real predictor
    n_cal: int = 16384
    threads: int = 1
    seed: int = 0


@dataclass
class BaselineConfig(_FromParams):
    """Experiment 4: every baseline at matched density (or matched rank for predictors)."""

    model: str = "default"
    target_recalls: list[float] = field(default_factory=lambda: [0.99])
    rank: int = 0
    density_budget: float = 1.5
    n_cal: int = 65536
    n_eval: int = 8192
    dejavu_steps: int = 300
    seed: int = 0

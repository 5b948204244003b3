"""One config dataclass per experiment family, mirroring the parameters declared in apps/strata."""

from __future__ import annotations

from dataclasses import dataclass, field

from compute.core.config import FromParams as _FromParams

from .data import GeneratorConfig
from .model import ModelConfig


@dataclass
class DataParams(_FromParams):
    """E1 and the data part of E2–E4: the moist shallow-water world."""

    nlat: int = 32
    days: float = 3.0
    dt: float = 600.0
    tau_hours: float = 1.0  # condensation time scale τ
    gamma: float = 4.0e4  # latent heating γ
    mach: float = 1.0
    rotation: float = 1.0  # Ω / Ω_earth
    seed: int = 0

    def generator(self) -> GeneratorConfig:
        return GeneratorConfig(
            nlat=self.nlat,
            nlon=2 * self.nlat,
            days=self.days,
            dt=self.dt,
            tau=self.tau_hours * 3600.0,
            gamma=self.gamma,
            mach=self.mach,
            omega=7.292e-5 * self.rotation,
            seed=self.seed,
        )


@dataclass
class TrainParams(DataParams):
    """E2: tile training (one-step MSE on normalised increments, AdamW + cosine schedule)."""

    tile: int = 16
    patch: int = 2
    width: int = 64
    depth: int = 3
    na_kernel: int = 5
    rope: str = "stereo"
    decoder: str = "bilinear_dw"
    steps: int = 150
    batch: int = 8
    lr: float = 1e-3
    unroll: int = 1  # multi-step fine-tuning: unroll this many steps with backprop (last 20% of steps)

    def model(self) -> ModelConfig:
        ell = (3.141592653589793 / self.nlat) * self.patch  # ℓ = one patch's angular size at this resolution
        return ModelConfig(
            patch=(1, self.patch, self.patch),
            width=self.width,
            depth=self.depth,
            heads=max(1, self.width // 16),
            na_kernel=self.na_kernel,
            rope=self.rope,
            decoder=self.decoder,
            rope_length=ell,
        )


@dataclass
class RolloutParams(TrainParams):
    """E3: global rollout by blending overlapping tiles."""

    overlap: int = 4
    window: str = "cosine"
    lead_hours: float = 24.0
    eval_tile: int = 0  # tile size used at rollout (0 = the training tile): grid-invariance check
    watts: float = 15.0  # assumed power per busy core when RAPL is unreadable


@dataclass
class IsoFlopParams(DataParams):
    """E4: loss vs model size at fixed training FLOPs (≈ 3 × forward FLOPs × steps)."""

    tile: int = 16
    patch: int = 2
    depth: int = 2
    budgets: list[float] = field(default_factory=lambda: [1e10, 3e10])
    widths: list[int] = field(default_factory=lambda: [16, 48, 128])
    batch: int = 8
    lr: float = 2e-3

"""Configuration of the toptwo_bai experiments: one dataclass family mirroring the declared parameters."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from .simulator import Sampler

# Instance presets (spec §3).  GK16 = Garivier & Kaufmann 2016, §5 (experiments).
INSTANCES: dict[str, tuple[float, ...]] = {
    "gk16_mu1": (0.5, 0.45, 0.43, 0.40),
    "gk16_mu2": (0.3, 0.21, 0.2, 0.19, 0.18),
    "equal_sub": (0.5, 0.4, 0.4, 0.4),
    "near_tie": (0.5, 0.48, 0.3, 0.2),
}
INSTANCE_CHOICES = [*INSTANCES, "random", "custom"]
RANDOM_MIN_GAP = 0.05  # design choice: random instances redraw until μ(1) − μ(2) ≥ 0.05 (keeps T* moderate)
DELTA_GRID = [1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8]


def random_instance(n_arms: int, seed: int) -> tuple[float, ...]:
    """K uniform means in [0.05, 0.95] with a unique best arm (gap ≥ RANDOM_MIN_GAP), drawn from ``seed``."""
    rng = np.random.default_rng([seed, 2610_01951])
    while True:
        mu = np.round(rng.uniform(0.05, 0.95, n_arms), 3)
        top = np.sort(mu)[::-1]
        if top[0] - top[1] >= RANDOM_MIN_GAP:
            return tuple(float(m) for m in mu)


def resolve_means(instance: str, arm_means: list[float] | None = None, n_arms: int = 5, seed: int = 0) -> np.ndarray:
    """The Bernoulli means of an instance preset, a random instance or the custom list."""
    if instance == "custom":
        if not arm_means:
            raise ValueError("custom instance needs arm_means")
        return np.asarray(arm_means, dtype=float)
    if instance == "random":
        return np.asarray(random_instance(n_arms, seed))
    return np.asarray(INSTANCES[instance])


def unique_best_error(instance: str, arm_means: list[float] | None) -> str | None:
    """Cross-field check: the custom instance must have a unique best arm (T* is finite only then)."""
    if instance != "custom" or not arm_means:
        return None
    top = max(arm_means)
    if sum(1 for m in arm_means if m == top) > 1:
        return f"the best arm must be unique (the largest mean {top:g} appears more than once)"
    return None


@dataclass
class BanditConfig:
    """Parameters shared by every experiment of the family (see apps/toptwo_bai/experiments.py for bounds)."""

    instance: str = "gk16_mu1"
    """instance preset, "random" (n_arms uniform means) or "custom" (arm_means)"""
    arm_means: list[float] = field(default_factory=lambda: [0.5, 0.45, 0.43, 0.40])
    """Bernoulli means for the custom instance"""
    n_arms: int = 5
    """K for random instances"""
    beta: float = 0.5
    """leader probability β"""
    selection: str = "randomized"
    """randomized (coin with P(leader) = β) or tracking (Jourdan & Degenne 2022)"""
    challenger: str = "tci"
    """tci: argmin W(B,j) + log N_j;  tc: argmin W(B,j)"""
    forced_exploration: bool = False
    """pull argmin N_i whenever min N_i < √(t/K)"""
    threshold: str = "heuristic"
    """heuristic log((1 + log t)/δ) or gk16 log(2t(K − 1)/δ)"""
    n_runs: int = 100
    """R independent runs simulated in lock-step"""
    t_max: int = 1_000_000
    """runs still going at t_max are censored (reported separately, never counted as errors)"""
    seed: int = 0
    device: str = "cpu"

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> BanditConfig:
        """Build from the validated parameter dict (unknown keys ignored: each subclass takes its own)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in names})

    def means(self) -> np.ndarray:
        return resolve_means(self.instance, self.arm_means, self.n_arms, self.seed)

    def sampler(self, **overrides: Any) -> Sampler:
        kw: dict[str, Any] = {
            "rule": "eb_tci" if self.challenger == "tci" else "eb_tc",
            "beta": self.beta,
            "selection": self.selection,
            "forced_exploration": self.forced_exploration,
        }
        kw.update(overrides)
        return Sampler(**kw)


@dataclass
class LiveRunConfig(BanditConfig):
    delta: float = 0.01
    """confidence δ"""
    report_every: int = 300
    """steps between two dashboard updates"""
    tracked_run: int = 0
    """the run whose N_i(t)/t, Z_t and leader are plotted"""


@dataclass
class StoppingTimeConfig(BanditConfig):
    deltas: list[float] = field(default_factory=lambda: list(DELTA_GRID))
    """δ grid: one coupled trajectory per run serves every δ"""
    n_runs: int = 200
    slope_max_delta: float = 1e-4
    """fit the slope of E[τ] against log(1/δ) on δ ≤ this"""


@dataclass
class ComparisonConfig(BanditConfig):
    delta: float = 0.1
    n_runs: int = 200
    include_track_and_stop: bool = True
    """Track-and-Stop is several times slower (w*(μ̂) recomputed every tas_every steps)"""
    tas_every: int = 50


@dataclass
class DiagnosticsConfig(BanditConfig):
    horizon: int = 20_000
    """the sampling rule runs for this many steps without stopping"""
    n_runs: int = 100


@dataclass
class ForcedExplorationConfig(BanditConfig):
    second_instance: str = "equal_sub"
    """a second instance run with and without forced exploration (default: equal suboptimal means)"""
    delta: float = 0.01
    n_runs: int = 200

"""One config dataclass per experiment, mirroring the parameters declared in apps/causal_samplesize."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


class _FromParams:
    @classmethod
    def from_params(cls, params: dict[str, Any]):  # noqa: ANN206 - returns cls
        """Build from validated params; ``seed``/``device`` and unknown run fields are ignored."""
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in params.items() if k in names}
        return cls(**kw)


@dataclass
class CalculatorConfig(_FromParams):
    """Experiment 1: required n per source for one PoC endpoint under every applicable rule."""

    family: str = "PNS"  # PNS, PN, PS (binary, closed forms) or MULTI (LP family)
    side: str = "both"  # lower, upper or both (Bonferroni z_{1−α/4})
    eps: float = 0.05  # margin ε
    confidence: float = 0.95  # 1 − α
    ratio: float = 1.0  # allocation n_o / n_e
    basis: str = "per_arm"  # n_e counted per arm or as the experimental total
    planning: tuple[float, ...] = (0.6, 0.35, 0.25, 0.25, 0.15, 0.35)  # θ = (e1, e0, o11, o10, o01, o00)
    pilot: tuple[int, ...] = (60, 100, 35, 100, 25, 25, 15, 35)  # s1, m1, s0, m0, c11, c10, c01, c00
    alpha_p: float = 0.1  # pilot box level (safe plug-in covers the true n w.p. ≥ 1 − α_p)
    kx: int = 3  # multi-valued family: |X|
    ky: int = 3  # multi-valued family: |Y|
    query: str = "PNS"  # multi-valued query type
    xa: int = 1
    ya: int = 1
    xb: int = 0
    yb: int = 0
    seed: int = 0  # planning joint for the multi-valued family: Dirichlet(1) draw with this seed
    baseline_n_e: int = 0  # user-entered Li–Mao–Pearl design, n_e counted per ``basis`` (0 = not given)
    baseline_n_o: int = 0  # its observational size (0 = not given)


@dataclass
class SimulationConfig(_FromParams):
    """Experiment 2: attainment P(|L̂ − L| ≤ ε) and CI coverage vs n for each rule over random truths."""

    family: str = "PNS"
    side: str = "upper"
    eps: float = 0.05
    confidence: float = 0.95
    ratio: float = 1.0
    basis: str = "per_arm"
    n_truths: int = 20  # Dirichlet(1) truths over the 8 cells (X, Y_1, Y_0)
    joint: tuple[float, ...] = ()  # optional user joint over the 8 cells (overrides random truths)
    reps: int = 1000  # replicates R per (truth, rule, multiplier)
    ci_reps: int = 400  # replicates on which the CIs are computed (their Monte Carlo quantiles cost the most)
    multipliers: tuple[float, ...] = (0.5, 1.0, 2.0)
    rules: tuple[str, ...] = ("distribution_free", "plugin_active", "plugin_pilot", "plugin_safe", "baseline")
    pilot_size: int = 200  # pilot units per source for the pilot rules
    alpha_p: float = 0.1
    mc_draws: int = 256  # Gaussian draws for the directional-delta quantiles
    baseline_n_e: int = 0  # user-entered Li–Mao–Pearl design, n_e counted per ``basis`` (0 = not given)
    baseline_n_o: int = 0
    seed: int = 0


@dataclass
class KinkConfig(_FromParams):
    """Experiment 3: two max terms of the PNS lower bound tied (e1 − e0 vs e1 − P(y)) with gap Δ."""

    tie: str = "pair"  # "pair": e1 − e0 vs e1 − P(y); "null": e1 = e0 = P(y), four terms tie at 0
    gaps: tuple[float, ...] = (0.0, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.07, 0.1)
    n: int = 500  # per experimental arm and observational
    reps: int = 1000
    boots: int = 200
    gamma: float = 2 / 3  # m-out-of-n bootstrap: m = n^γ units resampled (per source, common fraction)
    confidence: float = 0.95
    mc_draws: int = 300
    seed: int = 0


@dataclass
class RatioConfig(_FromParams):
    """Experiment 4: required n for the PN lower endpoint as P(x, y) → 0, naive vs safe pilot plug-in."""

    p_xy: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5)
    pilot_sizes: tuple[int, ...] = (50, 100, 500)
    n_pilots: int = 20
    reps: int = 400
    eps: float = 0.05
    confidence: float = 0.95
    alpha_p: float = 0.1
    n_max: int = 2_000_000  # designs above this are capped (and flagged) to keep the simulation bounded
    seed: int = 0

"""One config dataclass per experiment family, mirroring the parameters declared in apps/verifiable_dp."""

from __future__ import annotations

from dataclasses import dataclass, field

from compute.core.config import FromParams as _FromParams


@dataclass
class ProtocolConfig(_FromParams):
    """Experiment 1: one (or repeated) protocol run with optional cheat injection."""

    m: int = 3  # number of provers
    mechanism: str = "sn_vbm"  # sn_vbm | sn_vlm | independent | central_binomial | central_laplace
    eps: float = 1.0  # target ε
    delta: float = 1e-6  # target δ
    records_per_prover: int = 200
    record_rate: float = 0.3  # fraction of records that are 1 (synthetic data, numpy Generator)
    k: int = 24  # SN-VLM comparison precision (bits of U)
    cheat: str = "none"  # none | non_bit_coin | wrong_opening | bad_triple | coin_changed | wrong_final_share | all
    cheater: int = 1  # which prover cheats (0-based; taken mod m)
    public_coins: str = "interactive"  # interactive | fiat_shamir (grindable by colluding provers)
    repeats: int = 1  # honest repetitions (completeness); each uses fresh protocol randomness
    coins_override: int = 0  # > 0: use this many binomial coins instead of the accounted n_b (demos, tests)
    seed: int = 0


@dataclass
class ErrorConfig(_FromParams):
    """Experiment 2: RMSE of the released count vs the number of provers m (analytic + Monte Carlo)."""

    m_max: int = 8
    eps_list: list[float] = field(default_factory=lambda: [0.1, 0.25, 0.5, 1.0, 2.0])
    delta: float = 1e-6
    k: int = 24
    mc_draws: int = 100_000
    seed: int = 0


@dataclass
class LoadConfig(_FromParams):
    """Experiment 3: preprocessing load and randomness-generation time vs ε and m."""

    eps_list: list[float] = field(default_factory=lambda: [0.1, 0.25, 0.5, 1.0, 2.0])
    m_list: list[int] = field(default_factory=lambda: [2, 3, 5, 8])
    delta: float = 1e-6
    k: int = 24
    calib_coins: int = 8  # coins per calibration run (per-bit and per-multiplication costs)
    run_limit_s: float = 60.0  # a configuration predicted above this is extrapolated, not run
    budget_s: float = 60.0  # total wall time for full measured runs (cheapest of each mechanism in turn)
    seed: int = 0


@dataclass
class PrivacyConfig(_FromParams):
    """Experiment 4: exact privacy curves δ(ε′) and coins required vs ε."""

    eps: float = 1.0
    delta: float = 1e-6
    k_list: list[int] = field(default_factory=lambda: [8, 12, 16, 20, 24, 32])
    n_grid: int = 60
    seed: int = 0

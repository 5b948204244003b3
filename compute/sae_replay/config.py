"""One config dataclass per experiment, mirroring the parameters declared in apps/sae_replay."""

from __future__ import annotations

from dataclasses import dataclass, field

from compute.core.config import FromParams as _FromParams


@dataclass
class SourceConfig(_FromParams):
    """Where activations come from, and the SAE trained on them (shared by every experiment)."""

    source: str = "synthetic"  # synthetic | minilm
    layer: int = 3  # MiniLM residual-stream layer (output of block `layer`, 1..5)
    d: int = 64  # synthetic input width
    n_feat: int = 512  # synthetic true features (n_feat > d: superposition)
    noise: float = 0.01  # synthetic σ
    n_hier: int = 8  # synthetic parent→children hierarchies (absorption)
    arch: str = "topk"  # topk | batchtopk | jumprelu
    m: int = 512  # dictionary size (synthetic 512 = n_feat; MiniLM 4·d = 1536)
    k: int = 8  # target L0 (TopK k; BatchTopK mean k; JumpReLU λ is calibrated to it)
    batch: int = 1024
    lr: float = 1e-2  # Adam; 5e-4 (spec) is far too small for CPU-sized budgets of a few hundred steps
    l0_coeff: float = 0.0  # JumpReLU λ; 0 = calibrate to L0 ≈ k on fresh data before the sweep
    n_eval_log2: int = 14  # held-out activations 2^n
    n_evals: int = 8  # live evaluations per arm
    cache_tokens_log2: int = 17  # MiniLM cache size 2^n training tokens
    seed: int = 0


@dataclass
class SweepConfig(SourceConfig):
    """Experiment 1: fresh vs replay vs small-but-fresh at equal T, L0 and steps."""

    t_log2: int = 18  # training budget T = 2^n tokens
    r_list: list[int] = field(default_factory=lambda: [4, 16, 64])
    small_fresh: bool = True
    fresh_seeds: int = 1  # extra fresh seeds widen the reference band
    tol_ev: float = 0.005  # |ΔEV| tolerance of the plateau


@dataclass
class ScalingConfig(SourceConfig):
    """Experiment 2: the (U, R) grid, the data-constrained fit and the buffer-sizing rule."""

    u_log2_list: list[int] = field(default_factory=lambda: [10, 11, 12, 13, 14])
    r_list: list[int] = field(default_factory=lambda: [1, 2, 4, 8, 16])
    m_list: list[int] = field(default_factory=list)  # optional dictionary-size axis (empty: m only)
    target_t_log2: int = 20  # budget for the recommendation
    tolerance: float = 0.01  # x in L(U, T/U) ≤ (1 + x)·L(T, 1)
    n_boot: int = 40


@dataclass
class RobustnessConfig(SourceConfig):
    """Experiment 3: ΔEV (replay − fresh) across architectures and layers."""

    archs: list[int] = field(default_factory=lambda: [0, 1, 2])  # indices into sae.ARCHS
    layers: list[int] = field(default_factory=lambda: [3])
    t_log2: int = 17
    r_list: list[int] = field(default_factory=lambda: [16])
    tol_ev: float = 0.005


@dataclass
class InterpConfig(SourceConfig):
    """Experiment 4: absorption, sparse probing and the interpretability proxies against R."""

    t_log2: int = 18
    r_list: list[int] = field(default_factory=lambda: [1, 4, 16, 64])
    n_seeds: int = 2
    probe_k: int = 1

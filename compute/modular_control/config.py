"""One dataclass per experiment, mirroring the declared parameters of apps/modular_control/experiments.py."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from compute.core.config import FromParams as _FromParams

FAMILY_SETS = {
    "walker": ["walker"],
    "hopper": ["hopper"],
    "cheetah": ["cheetah"],
    "humanoid": ["humanoid"],
    "walker+hopper": ["walker", "hopper"],
    "all": ["walker", "hopper", "cheetah", "humanoid"],
}
REVEAL = {"none": (), "damping": ("damping",), "all": ("damping", "friction", "armature")}
ARCH_SETS = {
    "paper four": ["mlp", "metamorph", "modumorph", "modrec"],
    "modrec vs metamorph": ["metamorph", "modrec"],
    "all five": ["mlp", "metamorph", "amorpheus", "modumorph", "modrec"],
}


@dataclass(frozen=True)
class TrainConfig(_FromParams):
    """E1: multi-robot recurrent-PPO training of one architecture."""

    families: str = "walker"
    split_seed: int = 0
    arch: str = "modrec"
    order: str = "rnn_then_attn"  # modrec: GRU then attention (paper's method) or attention then GRU
    reveal: str = "none"  # hidden-context fields moved into c⁺ (ablation)
    steps: int = 60_000
    n_slots: int = 8
    bptt: int = 16
    epochs: int = 2
    episode_len: int = 500
    kin_lo: float = 1.0  # training limb-length factor range (1 = no kinematic randomisation)
    kin_hi: float = 1.0
    recurrent: bool = True  # ablations (modrec)
    attn: bool = True
    use_ctx: bool = True
    seed: int = 0

    def key(self) -> str:
        """Cache key of the checkpoint this configuration trains."""
        d = asdict(self)
        return f"{self.arch}-{self.families}-{hashlib.sha1(json.dumps(d, sort_keys=True).encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class ZeroShotConfig(_FromParams):
    """E2: zero-shot evaluation of trained checkpoints on out-of-distribution robots."""

    archs: str = "paper four"
    families: str = "walker"
    split_seed: int = 0
    train_steps: int = 30_000
    n_seeds: int = 1
    axis: str = "all"  # dynamics | kinematics | topology | all
    scale_grid: tuple[float, ...] = (0.4, 0.7, 1.0, 1.3, 1.6)
    eval_len: int = 200
    eval_reps: int = 1
    n_slots: int = 8  # env slots of the training runs it needs
    seed: int = 0


@dataclass(frozen=True)
class ProbeConfig(_FromParams):
    """E3: does the recurrent state encode the hidden damping?"""

    families: str = "cheetah"
    split_seed: int = 0
    train_steps: int = 30_000
    episodes: int = 128
    horizon: int = 60
    damping_range: tuple[float, float] = (0.25, 4.0)  # per-limb damping factor, log-uniform
    ridge: float = 10.0
    n_slots: int = 8
    seed: int = 0


@dataclass(frozen=True)
class AblationConfig(_FromParams):
    """E4: recurrence × attention × context, each on or off (2³ ModRec variants)."""

    families: str = "walker"
    split_seed: int = 0
    train_steps: int = 30_000
    eval_len: int = 200
    subset: str = "all"  # "all" (2³ configurations) or "recurrence" (ModRec with/without its GRU)
    n_slots: int = 8
    seed: int = 0

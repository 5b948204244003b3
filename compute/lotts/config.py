"""One config dataclass per experiment family, mirroring the parameters declared in apps/lotts."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields

from compute.core.config import FromParams as _FromParams


@dataclass
class WorldConfig(_FromParams):
    """The build step: the toy T2I diffusion model and the two verifiers, trained once and cached."""

    size: int = 16  # image side S (16 or 32)
    width: int = 16  # first UNet width; blocks (w, 2w, 2w); the spec's (32, 64, 64) is width 32 (2.4× slower)
    p_def: float = 0.4  # fraction of training images with a planted defect
    p_drop_quality: float = 0.3  # drop the quality token (CFG over quality)
    p_drop_caption: float = 0.1  # drop the whole caption (unconditional branch)
    train_steps: int = 1200  # AdamW steps of the denoiser
    prediction: str = "v"  # network target: "v" (SD2.1-v) or "eps"
    batch: int = 64
    lr: float = 2e-3
    ema: float = 0.995
    n_train: int = 20000  # pre-rendered training images
    verifier_steps: int = 600  # steps of each verifier CNN
    world_seed: int = 0  # data and init seed of the world; the run seed does not change the cached world

    def world(self) -> WorldConfig:
        """The world part of any derived config (experiment configs inherit WorldConfig)."""
        return WorldConfig(**{f.name: getattr(self, f.name) for f in fields(WorldConfig)})

    def key(self) -> str:
        """Cache key: a hash of the world fields only (experiment fields never change the world)."""
        world = {f.name: getattr(self, f.name) for f in fields(WorldConfig)}
        return hashlib.sha1(json.dumps(world, sort_keys=True).encode()).hexdigest()[:10]


# the test-size world (spec §2: tests train a micro config)
MICRO_WORLD = {"width": 16, "train_steps": 400, "n_train": 3000, "verifier_steps": 150}


@dataclass
class SearchConfig(WorldConfig):
    """Exp. 1 (quality vs NFE) and the shared search knobs."""

    n_prompts: int = 8
    bon_n: tuple[int, ...] = (1, 2, 4, 8, 16)
    lotts_k: tuple[int, ...] = (1, 2, 4)
    branch: int = 2  # b: refinements per node
    depth: int = 1  # D: DFS depth
    r: float = 0.2  # mask ratio
    t0_frac: float = 0.5  # restart level t₀/T
    h_hol: int = 2  # holistic steps
    lam: float = 0.3  # λ, foreground prior weight
    cfg_scale: float = 3.0
    steps: int = 20  # DDIM steps S
    loc_t: tuple[float, ...] = (0.2, 0.4)  # localization t/T (SNR-matched to SD's 0.4T, 0.6T; see docs)
    layers: str = "down"  # attention blocks averaged (the S/2 down block; see docs: ② inverts in the up block)
    propagation: str = "sa"  # step ②: "sa" = CA′ = SA·CA (paper), "none" = skip ② (ablation)
    dilate: int = 0  # mask dilation (pixels)
    gallery: int = 4


@dataclass
class LocalizationConfig(WorldConfig):
    """Exp. 2: planted-defect localization (AUROC / IoU), ablations of ①–④."""

    n_images: int = 64
    r: float = 0.2
    lam: float = 0.3
    loc_t: tuple[float, ...] = (0.2, 0.4)
    layers: str = "down"  # "down" (S/2 down block), "up", "s2" (both S/2 blocks), "mid" (S/4), "all"
    dilate: int = 0
    gallery: int = 6


@dataclass
class SensitivityConfig(SearchConfig):
    """Exp. 3: LoTTS held-out quality over a grid of two knobs at a fixed NFE budget."""

    grid_x: str = "r"
    grid_y: str = "t0_frac"
    x_values: tuple[float, ...] = (0.1, 0.2, 0.35)
    y_values: tuple[float, ...] = (0.3, 0.5, 0.7)
    budget_bon: int = 4  # the budget = NFE of Best-of-N at this N

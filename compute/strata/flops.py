"""FLOP counting for the iso-FLOP study (paper §5: km-scale emulation needs ≈10× the FLOPs per grid point).

Forward FLOPs come from ``torch.utils.flop_counter.FlopCounterMode`` (matmuls, convolutions, SDPA); training FLOPs
≈ 3 × forward (forward + backward).  Neighbourhood attention's cost is N·K·d, not N²·d, which breaks 6ND; the dense
masked fallback is counted as the N·K it computes usefully.  FLOPs per grid point = forward FLOPs / (T²·D).
"""

from __future__ import annotations

import torch
from torch.utils.flop_counter import FlopCounterMode

from .model import ModelConfig, TileModel


def forward_flops(cfg: ModelConfig, tile: int, batch: int = 1) -> int:
    """Forward FLOPs of one batch of tiles, counted with the gather NA path (the useful N·K work)."""
    cfg = ModelConfig(**{**cfg.__dict__, "na_impl": "gather"})
    model = TileModel(cfg).eval()
    x = torch.zeros(batch, cfg.in_channels, cfg.levels, tile, tile)
    lat = torch.zeros(batch, tile, tile)
    with FlopCounterMode(display=False) as fc, torch.no_grad():
        model(x, lat, lat)
    return int(fc.get_total_flops())


def flops_per_grid_point(cfg: ModelConfig, tile: int) -> float:
    return forward_flops(cfg, tile, 1) / (tile * tile * cfg.levels)

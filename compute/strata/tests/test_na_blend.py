"""Neighbourhood attention fallbacks and tile blending (known answers)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from compute.strata.na import na_dense, na_gather, neighbour_index, window_starts
from compute.strata.rollout import blend, blend_weights, extract_tiles, seam_metric, tile_layout, window_1d


def test_windows_shift_inward_at_borders() -> None:
    assert window_starts(7, 3).tolist() == [0, 0, 1, 2, 3, 4, 4]
    assert window_starts(6, 5).tolist() == [0, 0, 0, 1, 1, 1]
    assert window_starts(3, 5).tolist() == [0, 0, 0]  # kernel clipped to the axis
    idx = neighbour_index((4, 5), (3, 3))
    assert idx.shape == (20, 9)
    # corner token 0 sees rows 0..2, cols 0..2; token (1, 4) sees rows 0..2, cols 2..4
    assert sorted(idx[0].tolist()) == [0, 1, 2, 5, 6, 7, 10, 11, 12]
    assert sorted(idx[9].tolist()) == [2, 3, 4, 7, 8, 9, 12, 13, 14]


def _naive(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, shape: tuple, kernel: tuple) -> torch.Tensor:
    """Explicit loop over tokens and their 3D windows (the definition)."""
    out = torch.zeros_like(q)
    grid = np.indices(shape).reshape(len(shape), -1).T
    starts = [window_starts(n, kk) for n, kk in zip(shape, kernel, strict=False)]
    for i, c in enumerate(grid):
        nb = [
            j
            for j, cj in enumerate(grid)
            if all(starts[d][c[d]] <= cj[d] < starts[d][c[d]] + min(kernel[d], shape[d]) for d in range(len(shape)))
        ]
        att = (q[:, :, i : i + 1] @ k[:, :, nb].transpose(-1, -2)) / q.shape[-1] ** 0.5
        out[:, :, i] = (att.softmax(-1) @ v[:, :, nb])[:, :, 0]
    return out


def test_dense_and_gather_fallbacks_equal_the_definition() -> None:
    torch.manual_seed(0)
    shape, kernel = (2, 4, 5), (3, 3, 3)
    n = int(np.prod(shape))
    q, k, v = (torch.randn(2, 2, n, 8, dtype=torch.float64) for _ in range(3))
    ref = _naive(q, k, v, shape, kernel)
    assert torch.allclose(na_dense(q, k, v, shape, kernel), ref, atol=1e-6)
    assert torch.allclose(na_gather(q, k, v, shape, kernel), ref, atol=1e-6)


def test_gather_backward_matches_dense() -> None:
    torch.manual_seed(1)
    shape, kernel = (1, 6, 6), (5, 5, 5)
    qkv = [torch.randn(1, 2, 36, 8, requires_grad=True) for _ in range(3)]
    g1 = torch.autograd.grad(na_dense(*qkv, shape, kernel).pow(2).sum(), qkv)
    g2 = torch.autograd.grad(na_gather(*qkv, shape, kernel).pow(2).sum(), qkv)
    for a, b in zip(g1, g2, strict=False):
        assert torch.allclose(a, b, atol=1e-5)


def test_window_values() -> None:
    w = window_1d(16, 4, "cosine")
    assert np.allclose(w[:4], np.sin(np.pi * (np.arange(4) + 0.5) / 8) ** 2)
    assert np.allclose(w[4:12], 1) and np.allclose(w, w[::-1])
    assert w.min() > 0  # never zero: Σ_t w_t > 0 even at the poles' single-tile margins
    assert np.allclose(window_1d(16, 0), 1) and np.allclose(window_1d(16, 4, "uniform"), 1)


@pytest.mark.parametrize(
    ("nlat", "nlon", "tile", "overlap", "kind"),
    [(32, 64, 16, 4, "cosine"), (32, 64, 16, 0, "uniform"), (30, 50, 12, 3, "linear"), (64, 128, 32, 8, "cosine")],
)
def test_blending_is_a_partition_of_unity_and_reproduces_the_truth(nlat, nlon, tile, overlap, kind) -> None:
    layout, total = blend_weights(nlat, nlon, tile, overlap, kind)
    assert total.min() > 0
    rng = np.random.default_rng(0)
    field = rng.normal(size=(2, 1, nlat, nlon))
    crops = extract_tiles(field, layout, tile)
    assert np.allclose(blend(crops, field.shape, tile, overlap, kind), field, atol=1e-12)  # exact reconstruction
    ones = blend(np.ones((len(layout), 1, tile, tile)), (1, nlat, nlon), tile, overlap, kind)
    assert np.allclose(ones, 1.0, atol=1e-12)  # normalised weights sum to one everywhere
    assert max(j for _, j in tile_layout(nlat, nlon, tile, overlap)) + tile >= nlon  # wraps around in longitude


def test_seam_metric_detects_tile_edges_and_not_the_longitude_wrap() -> None:
    nlat, nlon, tile = 32, 64, 16
    i, j = np.meshgrid(np.arange(nlat), np.arange(nlon), indexing="ij")
    smooth = np.sin(2 * np.pi * j / nlon) * np.cos(np.pi * i / nlat)  # periodic: no jump at the wrap
    assert abs(seam_metric(smooth, tile, 0) - 1.0) < 0.1
    rng = np.random.default_rng(0)
    layout = tile_layout(nlat, nlon, tile, 0)
    offsets = extract_tiles(smooth, layout, tile) + rng.normal(size=len(layout))[:, None, None]
    jumpy = blend(offsets, smooth.shape, tile, 0, "uniform")  # per-tile offsets: steps at tile edges
    assert seam_metric(jumpy, tile, 0) > 3.0


def test_efficiency_counters_hand_computed() -> None:
    from compute.strata.energy import EnergyMeter, efficiency

    e = efficiency(sim_days=1.0, seconds=3600.0, joules=100.0 * 3600.0)  # 1 day in 1 h at 100 W = 0.1 kWh
    assert abs(e["sim_days_per_day"] - 24.0) < 1e-12 and abs(e["sim_days_per_kwh"] - 10.0) < 1e-12
    m = EnergyMeter(watts=50.0)
    for _ in range(3):  # accumulates over uses
        with m:
            sum(range(1000))
    assert m.seconds > 0 and (m.source == "RAPL" or abs(m.joules - 50.0 * m.seconds) < 1e-9)

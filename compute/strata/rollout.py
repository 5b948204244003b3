"""Global rollout by overlapping-tile blending, and the seam metric (paper §3 "global inference").

Tiles of size T with overlap o and stride s = T − 2o; longitude periodic, latitude clamped with the last tile
aligned to the pole edge.  Blend ŷ = Σ_t w_t y_t / Σ_t w_t with separable w(i, j) = w(i)·w(j).
Window (design; the paper's is not public): w(u) = sin²(π(u + ½)/(2o)) across each o-wide margin, 1 inside.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def window_1d(tile: int, overlap: int, kind: str = "cosine") -> np.ndarray:
    """Taper of length T: ``cosine`` = sin² ramps over the o-wide margins, ``linear`` ramps, ``uniform`` = ones."""
    w = np.ones(tile)
    if overlap <= 0 or kind == "uniform":
        return w
    u = np.arange(overlap)
    ramp = np.sin(np.pi * (u + 0.5) / (2 * overlap)) ** 2 if kind == "cosine" else (u + 0.5) / overlap
    w[:overlap] = ramp
    w[tile - overlap :] = ramp[::-1]
    return w


def tile_layout(nlat: int, nlon: int, tile: int, overlap: int) -> list[tuple[int, int]]:
    """Tile origins (i0, j0): stride s = T − 2o; latitude clamped (last tile ends at the edge), longitude wraps."""
    s = tile - 2 * overlap
    if s <= 0:
        raise ValueError("overlap must be < tile/2")
    n_i = max(1, math.ceil((nlat - tile) / s) + 1)
    rows = sorted({min(i * s, nlat - tile) for i in range(n_i)})
    cols = [j * s for j in range(math.ceil(nlon / s))]
    return [(i, j) for i in rows for j in cols]


def blend_weights(nlat: int, nlon: int, tile: int, overlap: int, kind: str = "cosine") -> tuple[list, np.ndarray]:
    """Per-tile weight w(i)w(j) and their sum Σ_t w_t over the globe (nlat, nlon)."""
    w1 = window_1d(tile, overlap, kind)
    w2 = np.outer(w1, w1)
    total = np.zeros((nlat, nlon))
    layout = tile_layout(nlat, nlon, tile, overlap)
    for i0, j0 in layout:
        cols = np.arange(j0, j0 + tile) % nlon
        np.add.at(total, (slice(i0, i0 + tile), cols), w2)
    return layout, total


def extract_tiles(field: np.ndarray, layout: list, tile: int) -> np.ndarray:
    """Crops (n_tiles, …, T, T) of a global field (…, nlat, nlon) with longitude wrap."""
    nlon = field.shape[-1]
    out = []
    for i0, j0 in layout:
        cols = np.arange(j0, j0 + tile) % nlon
        out.append(field[..., i0 : i0 + tile, :][..., cols])
    return np.stack(out)


def blend(tiles: np.ndarray, shape: tuple[int, ...], tile: int, overlap: int, kind: str = "cosine") -> np.ndarray:
    """ŷ = Σ_t w_t y_t / Σ_t w_t; tiles (n_tiles, …, T, T) → global (…, nlat, nlon)."""
    nlat, nlon = shape[-2:]
    layout, total = blend_weights(nlat, nlon, tile, overlap, kind)
    w1 = window_1d(tile, overlap, kind)
    w2 = np.outer(w1, w1)
    out = np.zeros(shape)
    for t, (i0, j0) in enumerate(layout):
        cols = np.arange(j0, j0 + tile) % nlon
        out[..., i0 : i0 + tile, cols] += w2 * tiles[t]
    return out / total


def seam_lines(nlat: int, nlon: int, tile: int, overlap: int) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks of grid-line crossings that are tile edges: lat (nlat−1,) between rows, lon (nlon,) columns.

    ``lat_seam[i]`` marks the crossing between rows i and i+1; ``lon_seam[j]`` the one between columns j and j+1
    (mod nlon).  Tile edges at the globe's pole rows are not seams.
    """
    lat_seam = np.zeros(nlat - 1, bool)
    lon_seam = np.zeros(nlon, bool)
    for i0, j0 in tile_layout(nlat, nlon, tile, overlap):
        for e in (i0 - 1, i0 + tile - 1):
            if 0 <= e < nlat - 1:
                lat_seam[e] = True
        lon_seam[(j0 - 1) % nlon] = True
        lon_seam[(j0 + tile - 1) % nlon] = True
    return lat_seam, lon_seam


def seam_metric(field: np.ndarray, tile: int, overlap: int, pole_rows: int = 2) -> float:
    """Mean |∇| across tile edges ÷ mean |∇| across all other grid lines (1 = no seams); pole rows excluded."""
    nlat, nlon = field.shape[-2:]
    lat_seam, lon_seam = seam_lines(nlat, nlon, tile, overlap)
    dy = np.abs(np.diff(field, axis=-2))  # (…, nlat−1, nlon)
    dx = np.abs(np.roll(field, -1, axis=-1) - field)  # (…, nlat, nlon)
    rows = np.arange(nlat)
    keep_r = (rows >= pole_rows) & (rows < nlat - pole_rows)
    dxk = dx[..., keep_r, :]
    dyk = dy[..., keep_r[:-1] & keep_r[1:], :]
    ls = lat_seam[keep_r[:-1] & keep_r[1:]]
    seam = np.concatenate([dyk[..., ls, :].ravel(), dxk[..., lon_seam].ravel()])
    other = np.concatenate([dyk[..., ~ls, :].ravel(), dxk[..., ~lon_seam].ravel()])
    return float(seam.mean() / max(other.mean(), 1e-30))


@torch.no_grad()
def global_step(
    model: torch.nn.Module,
    xn: np.ndarray,
    lats: np.ndarray,
    lons: np.ndarray,
    tile: int,
    overlap: int,
    kind: str,
    inc_scale: np.ndarray,
    batch: int = 64,
) -> np.ndarray:
    """One 10-min global step: tile → model increment → blend; xn (C, D, nlat, nlon) normalised fields."""
    nlat, nlon = xn.shape[-2:]
    layout = tile_layout(nlat, nlon, tile, overlap)
    tiles = extract_tiles(xn, layout, tile)  # (n, C, D, T, T)
    lat_t = np.stack([np.broadcast_to(lats[i0 : i0 + tile, None], (tile, tile)) for i0, _ in layout])
    lon_t = np.stack([np.broadcast_to(lons[np.arange(j0, j0 + tile) % nlon][None], (tile, tile)) for _, j0 in layout])
    preds = []
    for k in range(0, len(layout), batch):
        x = torch.from_numpy(tiles[k : k + batch]).float()
        preds.append(model(x, torch.from_numpy(lat_t[k : k + batch]), torch.from_numpy(lon_t[k : k + batch])).numpy())
    inc = blend(np.concatenate(preds), xn.shape, tile, overlap, kind)
    return xn + inc * inc_scale[:, None, None, None]

"""Tiles on the sphere: spherical centroids, the stereographic projection of StereoRoPE, tile sampling.

Paper §3 (StereoRoPE): each token's position is the stereographic projection of its patch centroid onto the plane
tangent at the tile centre, so positions are grid-invariant and independent of where the tile sits in longitude.
"""

from __future__ import annotations

import numpy as np
import torch


def unit_vectors(lat: torch.Tensor, lon: torch.Tensor) -> torch.Tensor:
    """(…) lat/lon in radians → (…, 3) unit vectors (cosφ cosλ, cosφ sinλ, sinφ)."""
    c = torch.cos(lat)
    return torch.stack([c * torch.cos(lon), c * torch.sin(lon), torch.sin(lat)], dim=-1)


def spherical_centroid(
    lat: torch.Tensor, lon: torch.Tensor, dims: tuple[int, ...]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Centroid = normalised mean of the 3D unit vectors over ``dims``; returns (lat, lon) in radians.

    Correct across the dateline (179° and −179° → 180°) and at the poles, unlike averaging angles.
    """
    v = unit_vectors(lat, lon).mean(dim=dims)
    v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return torch.asin(v[..., 2].clamp(-1, 1)), torch.atan2(v[..., 1], v[..., 0])


def stereographic(
    lat: torch.Tensor, lon: torch.Tensor, lat0: torch.Tensor, lon0: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Stereographic projection onto the plane tangent at (φ0, λ0) (unit sphere).

    cos c = sinφ0 sinφ + cosφ0 cosφ cosΔλ,  k = 2/(1 + cos c),
    x = k cosφ sinΔλ,  y = k (cosφ0 sinφ − sinφ0 cosφ cosΔλ).
    """
    dlon = lon - lon0
    cosc = torch.sin(lat0) * torch.sin(lat) + torch.cos(lat0) * torch.cos(lat) * torch.cos(dlon)
    k = 2.0 / (1.0 + cosc)
    x = k * torch.cos(lat) * torch.sin(dlon)
    y = k * (torch.cos(lat0) * torch.sin(lat) - torch.sin(lat0) * torch.cos(lat) * torch.cos(dlon))
    return x, y


def token_positions(
    lat: torch.Tensor, lon: torch.Tensor, patch: tuple[int, int], kind: str, length_scale: float
) -> torch.Tensor:
    """2D RoPE positions of the tokens of a batch of tiles; (B, nh·nw, 2) as (x, y).

    lat, lon: (B, H, W) pixel coordinates in radians.  ``kind``: ``stereo`` (stereographic of patch centroids about
    the tile centroid, divided by ``length_scale`` in radians) or ``axial_index`` (integer patch column/row).
    """
    b, h, w = lat.shape
    ph, pw = patch
    nh, nw = h // ph, w // pw
    if kind == "axial_index":
        yy, xx = torch.meshgrid(torch.arange(nh, dtype=lat.dtype), torch.arange(nw, dtype=lat.dtype), indexing="ij")
        return torch.stack([xx, -yy], -1).reshape(1, nh * nw, 2).expand(b, -1, -1)
    plat = lat.reshape(b, nh, ph, nw, pw)
    plon = lon.reshape(b, nh, ph, nw, pw)
    clat, clon = spherical_centroid(plat, plon, dims=(2, 4))  # (B, nh, nw) patch centroids
    lat0, lon0 = spherical_centroid(lat, lon, dims=(1, 2))  # (B,) tile centre
    x, y = stereographic(clat, clon, lat0[:, None, None], lon0[:, None, None])
    return (torch.stack([x, y], -1) / length_scale).reshape(b, nh * nw, 2)


def tile_index(nlat: int, nlon: int, i0: int, j0: int, tile: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of a T×T tile at (i0, j0): rows clamped inside [0, nlat), columns wrap in longitude."""
    i0 = int(min(max(i0, 0), nlat - tile))
    return np.arange(i0, i0 + tile), (np.arange(j0, j0 + tile) % nlon)


def sample_tiles(
    frames: np.ndarray, lats: np.ndarray, lons: np.ndarray, idx: np.ndarray, tile: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random T×T tiles of frames idx and idx+1 (longitude wrap); returns x, y (B, C, D, T, T), lat, lon (B, T, T)."""
    nlat, nlon = frames.shape[-2:]
    xs, ys, la, lo = [], [], [], []
    for t in idx:
        r, c = tile_index(nlat, nlon, int(rng.integers(0, nlat - tile + 1)), int(rng.integers(0, nlon)), tile)
        xs.append(frames[t][..., r[:, None], c[None, :]])
        ys.append(frames[t + 1][..., r[:, None], c[None, :]])
        la.append(np.broadcast_to(lats[r][:, None], (tile, tile)))
        lo.append(np.broadcast_to(lons[c][None, :], (tile, tile)))
    return np.stack(xs), np.stack(ys), np.stack(la), np.stack(lo)

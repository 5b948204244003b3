"""StereoRoPE geometry: projection, centroids, RoPE relative-position invariances (known answers)."""

from __future__ import annotations

import math

import torch

from compute.strata.model import apply_rope, rope_angles
from compute.strata.tiles import spherical_centroid, stereographic, token_positions, unit_vectors

D = torch.float64


def test_tile_centre_maps_to_origin_with_unit_scale() -> None:
    lat0, lon0 = torch.tensor(0.7, dtype=D), torch.tensor(-2.0, dtype=D)
    x, y = stereographic(lat0, lon0, lat0, lon0)
    assert abs(float(x)) < 1e-12 and abs(float(y)) < 1e-12
    # scale factor k = 2/(1+cos c) = 1 at the centre: a small step east/north has the same projected length
    h = 1e-6
    xe, _ = stereographic(lat0, lon0 + h / math.cos(0.7), lat0, lon0)
    _, yn = stereographic(lat0 + h, lon0, lat0, lon0)
    assert abs(float(xe) / h - 1) < 1e-6 and abs(float(yn) / h - 1) < 1e-6


def test_projection_is_conformal() -> None:
    """Jacobian w.r.t. local (east, north) distances has equal singular values (to 1e-6), at several points."""
    lat0, lon0 = torch.tensor(0.4, dtype=D), torch.tensor(1.0, dtype=D)
    for lat, lon in [(0.1, 0.8), (0.9, 1.6), (-0.3, 0.2), (0.6, 1.05)]:

        def f(v: torch.Tensor, lat: float = lat, lon: float = lon) -> torch.Tensor:
            e, n = v[0], v[1]
            return torch.stack(
                stereographic(
                    torch.tensor(lat, dtype=D) + n, torch.tensor(lon, dtype=D) + e / math.cos(lat), lat0, lon0
                )
            )

        jac = torch.autograd.functional.jacobian(f, torch.zeros(2, dtype=D))
        s = torch.linalg.svdvals(jac)
        assert float((s[0] - s[1]).abs() / s[0]) < 1e-6


def test_centroid_across_dateline_and_at_pole() -> None:
    lat = torch.tensor([0.0, 0.0], dtype=D)
    lon = torch.tensor([math.radians(179.0), math.radians(-179.0)], dtype=D)
    clat, clon = spherical_centroid(lat, lon, dims=(0,))
    assert abs(float(clat)) < 1e-12 and abs(abs(math.degrees(float(clon))) - 180.0) < 1e-9
    # a ring at 89° N around all longitudes: centroid is the pole
    lon = torch.linspace(0, 2 * math.pi, 37, dtype=D)[:-1]
    clat, _ = spherical_centroid(torch.full_like(lon, math.radians(89.0)), lon, dims=(0,))
    assert abs(math.degrees(float(clat)) - 90.0) < 1e-9


def _grid(lat_deg0: float, lon_deg0: float, n: int, dres: float) -> tuple[torch.Tensor, torch.Tensor]:
    """An n×n pixel tile (pixel centres) starting at (lat0, lon0) going south/east with spacing dres degrees."""
    la = torch.tensor([lat_deg0 - (i + 0.5) * dres for i in range(n)], dtype=D)
    lo = torch.tensor([lon_deg0 + (j + 0.5) * dres for j in range(n)], dtype=D)
    return torch.deg2rad(la)[:, None].expand(n, n)[None], torch.deg2rad(lo)[None, :].expand(n, n)[None]


def test_positions_invariant_to_longitude_shift_and_same_patch_at_double_resolution() -> None:
    ell = math.radians(10.0)
    lat, lon = _grid(50.0, 10.0, 16, 5.0)
    p1 = token_positions(lat, lon, (2, 2), "stereo", ell)
    p2 = token_positions(lat, lon + 2.0, (2, 2), "stereo", ell)  # tile moved along the sphere in longitude
    assert torch.allclose(p1, p2, atol=1e-12)
    # the same physical patches at 2× resolution (patch 4 px of 2.5°) get the same coordinates
    lat2, lon2 = _grid(50.0, 10.0, 32, 2.5)
    p3 = token_positions(lat2, lon2, (4, 4), "stereo", ell)
    assert torch.allclose(p1, p3, atol=2e-3)  # centroid of 16 vs 4 pixels differs at O(Δ²)
    # axial_index would double the coordinates' spacing if the patch size were kept: not grid-invariant
    a1 = token_positions(lat, lon, (2, 2), "axial_index", ell)
    a3 = token_positions(lat2, lon2, (2, 2), "axial_index", ell)
    assert a3.shape[1] == 4 * a1.shape[1]


def test_positions_invariant_to_rotating_the_tile_along_its_meridian() -> None:
    """Move a tile by a rigid rotation of the sphere about the centre's east axis: positions unchanged (1e-9)."""
    lat, lon = _grid(25.0, 40.0, 16, 2.0)
    v = unit_vectors(lat, lon)  # (1, H, W, 3)
    lat0, lon0 = spherical_centroid(lat, lon, dims=(1, 2))
    east = torch.stack([-torch.sin(lon0), torch.cos(lon0), torch.zeros_like(lon0)], -1)[0]
    a = math.radians(30.0)  # Rodrigues rotation about `east`
    kx = torch.tensor([[0, -east[2], east[1]], [east[2], 0, -east[0]], [-east[1], east[0], 0]], dtype=D)
    rot = torch.eye(3, dtype=D) + math.sin(a) * kx + (1 - math.cos(a)) * kx @ kx
    vr = v @ rot.T
    lat_r, lon_r = torch.asin(vr[..., 2]), torch.atan2(vr[..., 1], vr[..., 0])
    p = token_positions(lat, lon, (2, 2), "stereo", 0.05)
    pr = token_positions(lat_r, lon_r, (2, 2), "stereo", 0.05)
    assert abs(float(spherical_centroid(lat_r, lon_r, dims=(1, 2))[0]) - float(lat0)) > 0.4  # really moved
    assert torch.allclose(p, pr, atol=1e-9)


def test_rope_logits_depend_only_on_relative_position() -> None:
    torch.manual_seed(0)
    hd, n = 16, 10
    q, k = torch.randn(1, 2, n, hd, dtype=D), torch.randn(1, 2, n, hd, dtype=D)
    pos = torch.randn(1, n, 2, dtype=D) * 3
    shift = torch.tensor([1.7, -4.2], dtype=D)

    def logits(pp: torch.Tensor) -> torch.Tensor:
        ang = rope_angles(pp, hd)
        return apply_rope(q, ang) @ apply_rope(k, ang).transpose(-1, -2)

    assert torch.allclose(logits(pos), logits(pos + shift), atol=1e-10)
    assert not torch.allclose(logits(pos), logits(pos * 1.5), atol=1e-3)
    # rotation preserves norms
    ang = rope_angles(pos, hd)
    assert torch.allclose(apply_rope(q, ang).norm(dim=-1), q.norm(dim=-1), atol=1e-12)

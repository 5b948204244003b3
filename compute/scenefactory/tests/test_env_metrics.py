"""Metric definitions (TTC, DRAC, CASPS) and environment invariants (parking, resets, batched = per-world)."""

import math

import numpy as np
import pytest
import torch

from compute.scenefactory.env import CIRCLE_OFFSETS, CIRCLE_RADIUS, EnvConfig, VecDriveEnv, envelope_gap
from compute.scenefactory.metrics import casps, closing_speed, drac, summarize_episodes, ttc
from compute.scenefactory.scenes import SCENE_KINDS, resample, scene_paths


def test_drac_and_ttc_hand_computed() -> None:
    """10 m/s closing at a 5 m gap: DRAC = 10²/(2·5) = 10 m/s², TTC = 0.5 s; a 0.01 m gap is clamped to 0.1 m."""
    gap, closing = torch.tensor([5.0, 0.01, 5.0]), torch.tensor([10.0, 10.0, -3.0])
    assert drac(gap, closing).tolist() == pytest.approx([10.0, 500.0, 0.0])
    t = ttc(gap, closing)
    assert float(t[0]) == pytest.approx(0.5) and math.isinf(float(t[2]))
    # closing speed of a follower at 15 m/s behind a leader at 5 m/s: 10 m/s
    assert float(closing_speed(torch.tensor([8.0, 0.0]), torch.tensor([5.0 - 15.0, 0.0]))) == pytest.approx(10.0)


def test_envelope_gap_equals_brute_force_circles() -> None:
    """The closed-form 3-circle envelope gap equals the minimum over all 3×3 circle pairs (random poses, overlaps)."""
    g = torch.Generator().manual_seed(0)
    x, y = (torch.rand(5, 7, generator=g, dtype=torch.float64) * 12 for _ in range(2))
    psi = (torch.rand(5, 7, generator=g, dtype=torch.float64) * 2 - 1) * math.pi
    c, s = torch.cos(psi), torch.sin(psi)
    dpx, dpy = x[:, None, :] - x[:, :, None], y[:, None, :] - y[:, :, None]
    got = envelope_gap(dpx**2 + dpy**2, dpx, dpy, c, s)
    offs = torch.tensor(CIRCLE_OFFSETS, dtype=torch.float64)
    cx, cy = x[..., None] + offs * c[..., None], y[..., None] + offs * s[..., None]
    ddx = cx[:, None, :, None, :] - cx[:, :, None, :, None]
    ddy = cy[:, None, :, None, :] - cy[:, :, None, :, None]
    ref = torch.sqrt(ddx**2 + ddy**2).flatten(-2).amin(-1) - 2 * CIRCLE_RADIUS
    assert (ref < 0).any() and (ref > 5).any()  # both overlapping and distant pairs are covered
    assert torch.allclose(got, ref, atol=1e-9, rtol=0)


def test_casps_counts_spawned_agents_only() -> None:
    env = VecDriveEnv(EnvConfig(n_worlds=6, n_agents=4, spawn_prob=0.5, max_steps=50), seed=3)
    n = env.n_spawned
    assert 6 <= n < 24 and n == int(env.spawned.sum())
    assert casps(10, n, 2.0) == pytest.approx(5 * n)


def test_summary_rates() -> None:
    ep = {
        "success": torch.tensor([True, False, True, False]),
        "collision": torch.tensor([False, True, False, False]),
        "offroad": torch.tensor([False, False, False, True]),
        "peak_drac": torch.tensor([1.0, 10.0, 3.0, 5.0]),
        "min_ttc": torch.tensor([5.0, 0.5, 3.0, 1.0]),
        "return": torch.zeros(4),
    }
    s = summarize_episodes(ep)
    assert s["success"] == 0.5 and s["collision"] == 0.25 and s["mean_peak_drac"] == pytest.approx(4.75)
    assert s["high_drac_rate"] == 0.5 and s["near_miss_rate"] == 0.5


def test_parked_agents_neither_move_nor_collide() -> None:
    env = VecDriveEnv(EnvConfig(n_worlds=1, n_agents=2, max_steps=50, scenes=("straight",)), seed=0)
    env.parked[0, 1] = True
    env.state[0, 1, :2] = env.state[0, 0, :2] + torch.tensor([0.5, 0.0])  # overlapping a parked car
    before = env.state[0, 1].clone()
    _, done, info = env.step(torch.tensor([[[1.0, 0.0, 0.0], [1.0, 0.5, 0.0]]]))
    assert torch.equal(env.state[0, 1], before)
    assert not bool(env.stats["collision"][0, 0]) and not bool(done[0, 0])
    assert info["active"].tolist() == [[True, False]]


def test_collision_between_active_agents_parks_both() -> None:
    env = VecDriveEnv(EnvConfig(n_worlds=1, n_agents=2, max_steps=50, scenes=("straight",)), seed=0)
    env.state[0, 1, :3] = env.state[0, 0, :3] + torch.tensor([1.0, 0.0, 0.0])
    _, done, _ = env.step(torch.zeros(1, 2, 3))
    assert done.all()


def test_batched_env_equals_per_world_envs() -> None:
    """Stepping 3 worlds in one batch equals stepping each world alone (same scenes and actions)."""
    cfg = EnvConfig(n_worlds=3, n_agents=3, max_steps=200)
    big = VecDriveEnv(cfg, seed=1)
    small = []
    for w in range(3):
        e = VecDriveEnv(EnvConfig(n_worlds=1, n_agents=3, max_steps=200), seed=1)
        for name in ("state", "route", "heading", "arclen", "idx", "mu", "spawned", "parked"):
            getattr(e, name)[:] = getattr(big, name)[w : w + 1]
        e.refresh()
        small.append(e)
    g = torch.Generator().manual_seed(0)
    for _ in range(5):
        a = torch.rand(3, 3, 3, generator=g) * 2 - 1
        r_big, _, _ = big.step(a)
        for w, e in enumerate(small):
            r, _, _ = e.step(a[w : w + 1])
            assert torch.allclose(e.state[0], big.state[w], atol=1e-5)
            assert torch.allclose(r[0], r_big[w], atol=1e-5)


@pytest.mark.parametrize("kind", SCENE_KINDS)
def test_scene_paths_are_smooth_and_resampled(kind: str) -> None:
    rng = np.random.default_rng(0)
    for p in scene_paths(kind, rng):
        q = resample(p, 64)
        seg = np.linalg.norm(np.diff(q, axis=0), axis=1)
        length = np.linalg.norm(np.diff(p, axis=0), axis=1).sum()
        assert np.median(seg) == pytest.approx(length / 63, rel=1e-6)  # equal arc-length spacing (chords cut corners)
        assert seg.max() <= length / 63 + 1e-9
        assert 40.0 < length < 200.0
        assert np.allclose(q[0], p[0]) and np.allclose(q[-1], p[-1])


def test_wet_worlds_get_lower_mu_and_token_masking() -> None:
    env = VecDriveEnv(EnvConfig(n_worlds=8, n_agents=2, wet_fraction=1.0, film_mm=(12.0,), weather_token=False), seed=0)
    assert torch.allclose(env.mu, torch.full((8,), 0.4079), atol=2e-3)
    assert float(env.observe()["ego"][..., 7:].abs().max()) == 0.0
    env2 = VecDriveEnv(EnvConfig(n_worlds=8, n_agents=2, wet_fraction=1.0, film_mm=(12.0,), weather_token=True), seed=0)
    assert float(env2.observe()["ego"][0, 0, 7]) == pytest.approx(12.0 / 5.0)

"""Latent compass: closed-form angles, unwrapping, global alignment."""

import numpy as np

from compute.progression.compass import compass, fit_compass, wrap


def test_angles_of_prototypes() -> None:
    z = np.array([[2.0, 0.0, 0.3, -1.0], [0.0, 0.5, 1.0, 1.0]])  # || e1, || e2 (other coordinates are free)
    th, r = compass(z, 0.0, np.array([0, 1, 2]))
    assert abs(th[0]) < 1e-12 and abs(th[1] - np.pi / 2) < 1e-12
    np.testing.assert_allclose(r, np.linalg.norm(z, axis=1))


def test_unwrap_across_pi() -> None:
    ang = np.linspace(2.5, 4.0, 30)  # crosses +pi
    z = np.c_[np.cos(ang), np.sin(ang)]
    th, _ = compass(z, 0.0, np.array([0, 30]))
    assert np.max(np.abs(np.diff(th))) < np.pi
    np.testing.assert_allclose(th, ang, atol=1e-12)
    assert np.all(np.abs(wrap(ang)) <= np.pi)


def test_global_offset_and_orientation() -> None:
    # two units sweeping clockwise from 30 deg: theta0 = 30 deg, sign = -1 -> compass increases from 0
    units = [np.linspace(0.0, -1.5 * np.pi, n) + np.radians(30) for n in (40, 60)]
    z = np.concatenate([np.c_[np.cos(u), np.sin(u)] for u in units])
    start = np.array([0, 40, 100])
    healthy = np.zeros(100, bool)
    healthy[[0, 40]] = True
    theta0, sign = fit_compass(z, start, healthy)
    assert abs(theta0 - np.radians(30)) < 1e-9 and sign == -1.0
    th, _ = compass(z, theta0, start, sign)
    assert abs(th[0]) < 1e-9 and abs(th[39] - 1.5 * np.pi) < 1e-9 and np.all(np.diff(th[:40]) > 0)

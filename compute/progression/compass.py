"""The latent compass: angle and radius of z in the plane of the two prototypes (paper Sec. 3.3).

theta = atan2(<z, e2>, <z, e1>) - theta0, unwrapped along each unit's time axis, r = ||z||.
theta0 is ONE global offset: the circular mean of the raw angle over the healthy training windows
(never a per-unit alignment, which would leak the unit's own trajectory).

Design choice (the paper leaves the alignment open): a global orientation sign s in {+1, -1}, fitted on the
training units so that theta increases from the first to the last window on average. With the released loss
(four RUL groups, margin-1 cosine triplet) adjacent groups are pushed ~90 degrees apart, so the trajectory may
sweep the long way round (0 -> -90 -> -180 -> -270 = e2); s makes the compass read "angle travelled from e1".
"""

from __future__ import annotations

import numpy as np


def raw_angle(z: np.ndarray) -> np.ndarray:
    """atan2(<z, e2>, <z, e1>) with e1, e2 the first two basis vectors; other coordinates are free."""
    return np.arctan2(z[:, 1], z[:, 0])


def circular_mean(theta: np.ndarray) -> float:
    """atan2(mean sin, mean cos)."""
    return float(np.arctan2(np.mean(np.sin(theta)), np.mean(np.cos(theta))))


def wrap(theta: np.ndarray) -> np.ndarray:
    """Map angles into (-pi, pi]."""
    return -(np.mod(-theta + np.pi, 2 * np.pi) - np.pi)


def compass(z: np.ndarray, theta0: float, start: np.ndarray, sign: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(theta, r) per window; theta = s * unwrap(wrap(raw - theta0)) within each unit rows start[u]:start[u+1]."""
    th = wrap(raw_angle(z) - theta0)
    for a, b in zip(start[:-1], start[1:], strict=True):
        th[a:b] = np.unwrap(th[a:b])
    return sign * th, np.linalg.norm(z, axis=1)


def fit_compass(z: np.ndarray, start: np.ndarray, healthy: np.ndarray) -> tuple[float, float]:
    """Global (theta0, s) from training windows: theta0 = circular mean over ``healthy`` windows; s = sign of the
    mean (last - first) unwrapped angle over training units."""
    theta0 = circular_mean(raw_angle(z[healthy]))
    th, _ = compass(z, theta0, start)
    swept = th[start[1:] - 1] - th[start[:-1]]
    return theta0, (1.0 if np.mean(swept) >= 0 else -1.0)

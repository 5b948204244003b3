"""Linear (ridge) probe of a hidden context variable from per-limb features (E3).

w = argmin ‖X w − y‖² + α ‖w‖²  (features standardised on the training rows, intercept unpenalised)
R² = 1 − Σ (y − ŷ)² / Σ (y − ȳ_test)²  on held-out episodes.
"""

from __future__ import annotations

import numpy as np


def ridge_fit(x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """Closed-form ridge on standardised features; returns (w, b, feature mean, feature std)."""
    mu, sd = x.mean(0), x.std(0) + 1e-8
    z = (x - mu) / sd
    yb = y.mean()
    w = np.linalg.solve(z.T @ z + alpha * np.eye(z.shape[1]), z.T @ (y - yb))
    return w, float(yb), mu, sd


def ridge_r2(x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray, y_te: np.ndarray, alpha: float = 1.0) -> float:
    """Held-out R² of a ridge probe (0 when either side is empty or the target is constant)."""
    if len(y_tr) < 2 or len(y_te) < 2 or np.var(y_te) == 0:
        return 0.0
    w, b, mu, sd = ridge_fit(x_tr, y_tr, alpha)
    pred = ((x_te - mu) / sd) @ w + b
    return float(1.0 - np.sum((y_te - pred) ** 2) / np.sum((y_te - y_te.mean()) ** 2))

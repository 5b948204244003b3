"""Scores: RUL errors, PHM08 score, health-indicator quality (Coble & Hines) and clustering agreement.

Clustering (k-means, ARI, NMI) is written out in numpy so the package needs no scikit-learn.
"""

from __future__ import annotations

import numpy as np
from scipy.special import comb
from scipy.stats import spearmanr


def rmse(pred: np.ndarray, true: np.ndarray) -> float:
    """sqrt(mean((pred - true)^2))."""
    d = np.asarray(pred, float) - np.asarray(true, float)
    return float(np.sqrt(np.mean(d**2)))


def phm_score(pred: np.ndarray, true: np.ndarray) -> float:
    """PHM08 score (Saxena 2008): sum(exp(-d/13) - 1) for d < 0 and sum(exp(d/10) - 1) for d >= 0, d = pred - true."""
    d = np.asarray(pred, float) - np.asarray(true, float)
    return float(np.sum(np.where(d < 0, np.expm1(-d / 13.0), np.expm1(d / 10.0))))


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation (nan when a side is constant)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


def monotonicity(x: np.ndarray) -> float:
    """|#(dx > 0) - #(dx < 0)| / (n - 1) of one series (Coble & Hines); 1 for a strictly monotone series."""
    d = np.diff(np.asarray(x, float))
    return float(abs(np.sum(d > 0) - np.sum(d < 0)) / max(len(d), 1))


def trendability(series: list[np.ndarray], n_points: int = 100) -> float:
    """min over unit pairs of |corr(x_i, x_j)| after resampling each on the life fraction (Coble & Hines)."""
    grid = np.linspace(0, 1, n_points)
    R = np.stack([np.interp(grid, np.linspace(0, 1, len(s)), s) for s in series])
    C = np.corrcoef(R)
    return float(np.nanmin(np.abs(C)))


def prognosability(series: list[np.ndarray]) -> float:
    """exp(-std(x_fail) / mean|x_start - x_fail|) over run-to-failure units (Coble & Hines)."""
    start = np.array([s[0] for s in series])
    end = np.array([s[-1] for s in series])
    return float(np.exp(-np.std(end) / max(np.mean(np.abs(start - end)), 1e-12)))


def kmeans(X: np.ndarray, k: int, rng: np.random.Generator, n_init: int = 4, iters: int = 100) -> np.ndarray:
    """Lloyd's k-means with k-means++ seeding; returns labels of the best of ``n_init`` restarts."""
    X = np.asarray(X, float)
    best, best_inertia = None, np.inf
    for _ in range(n_init):
        C = [X[rng.integers(len(X))]]
        for _ in range(1, k):
            d2 = np.min(((X[:, None, :] - np.asarray(C)[None]) ** 2).sum(-1), axis=1)
            C.append(X[rng.choice(len(X), p=d2 / d2.sum())] if d2.sum() > 0 else X[rng.integers(len(X))])
        C = np.asarray(C)
        labels = np.zeros(len(X), dtype=int)
        for it in range(iters):
            d2 = ((X[:, None, :] - C[None]) ** 2).sum(-1)
            new = d2.argmin(1)
            if it > 0 and np.array_equal(new, labels):
                break
            labels = new
            for j in range(k):
                if np.any(labels == j):
                    C[j] = X[labels == j].mean(0)
        inertia = float(((X - C[labels]) ** 2).sum())
        if inertia < best_inertia:
            best, best_inertia = labels.copy(), inertia
    return best


def _contingency(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    M = np.zeros((ai.max() + 1, bi.max() + 1))
    np.add.at(M, (ai, bi), 1)
    return M


def adjusted_rand_index(a: np.ndarray, b: np.ndarray) -> float:
    """ARI (Hubert & Arabie): (sum C(n_ij,2) - E) / (max - E), 1 for identical partitions."""
    M = _contingency(a, b)
    n = M.sum()
    s_ij = comb(M, 2).sum()
    s_a = comb(M.sum(1), 2).sum()
    s_b = comb(M.sum(0), 2).sum()
    expected = s_a * s_b / comb(n, 2)
    maximum = 0.5 * (s_a + s_b)
    if maximum == expected:
        return 1.0
    return float((s_ij - expected) / (maximum - expected))


def normalized_mutual_info(a: np.ndarray, b: np.ndarray) -> float:
    """NMI with arithmetic-mean normalisation: I(a;b) / ((H(a) + H(b)) / 2)."""
    M = _contingency(a, b)
    P = M / M.sum()
    pa, pb = P.sum(1), P.sum(0)
    nz = P > 0
    mi = float((P[nz] * np.log(P[nz] / np.outer(pa, pb)[nz])).sum())
    ha = -float((pa[pa > 0] * np.log(pa[pa > 0])).sum())
    hb = -float((pb[pb > 0] * np.log(pb[pb > 0])).sum())
    if ha + hb == 0:
        return 1.0
    return float(mi / (0.5 * (ha + hb)))

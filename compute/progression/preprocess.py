"""Preprocessing as in the released C-MAPSS script: drop flat sensors, per-condition z-score, MinMax, windows.

All statistics (condition clusters, z-scores, MinMax ranges) are fitted on the training units only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import Dataset, Unit
from .metrics import kmeans


@dataclass
class Windows:
    """Sliding windows (stride 1) of w cycles, one row per window end time t (t >= w - 1)."""

    X: np.ndarray  # (N, w, C) float32 scaled inputs
    unit: np.ndarray  # (N,) unit index (within its split)
    t: np.ndarray  # (N,) window end cycle
    rul: np.ndarray  # (N,) uncapped RUL at t
    health: np.ndarray  # (N,) h(t)
    life: np.ndarray  # (N,) life fraction t / T
    condition: np.ndarray  # (N,) operating condition at t
    fault_mode: np.ndarray  # (N,) the unit's fault mode
    start: np.ndarray  # (n_units + 1,) offsets: unit u owns rows start[u]:start[u+1]

    @property
    def n_units(self) -> int:
        return len(self.start) - 1

    def rows(self, u: int) -> slice:
        return slice(int(self.start[u]), int(self.start[u + 1]))

    def last_rows(self) -> np.ndarray:
        return self.start[1:] - 1


@dataclass
class Prepared:
    """Scaled windows of both splits plus the raw per-cycle scaled series (for the GRU baseline)."""

    train: Windows
    test: Windows
    holdout: Windows | None
    train_cycles: list[np.ndarray]  # per unit (L, C) scaled series
    test_cycles: list[np.ndarray]
    holdout_cycles: list[np.ndarray]
    channels: np.ndarray  # kept raw channel indices
    n_conditions: int


def _condition_labels(ds: Dataset) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Operating-condition cluster per cycle: k-means on the training settings, nearest centre for the others."""
    if ds.n_conditions == 1 or ds.train[0].settings is None:
        return tuple([np.zeros(len(u.sensors), int) for u in us] for us in (ds.train, ds.test, ds.holdout))
    S = np.concatenate([u.settings for u in ds.train])
    scale = S.std(0) + 1e-12
    rng = np.random.default_rng(0)
    sub = S[rng.choice(len(S), size=min(len(S), 3000), replace=False)] / scale
    lab = kmeans(sub, ds.n_conditions, rng, n_init=2)
    centres = np.stack([sub[lab == j].mean(0) for j in range(ds.n_conditions)])

    def assign(u: Unit) -> np.ndarray:
        return (((u.settings / scale)[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)

    return [assign(u) for u in ds.train], [assign(u) for u in ds.test], [assign(u) for u in ds.holdout]


def _windows(units: list[Unit], cycles: list[np.ndarray], w: int) -> Windows:
    Xs, unit, t, rul, health, life, cond, mode, start = [], [], [], [], [], [], [], [], [0]
    for i, (u, c) in enumerate(zip(units, cycles, strict=True)):
        L = len(c)
        if L < w:  # left-pad with the first cycle (never happens with the built-in sources)
            c = np.concatenate([np.repeat(c[:1], w - L, axis=0), c])
            offset = w - L
        else:
            offset = 0
        n = len(c) - w + 1
        idx = np.arange(w)[None, :] + np.arange(n)[:, None]  # (n, w)
        Xs.append(c[idx])
        tt = np.arange(n) + w - 1 - offset
        tt = np.clip(tt, 0, L - 1)
        unit.append(np.full(n, i))
        t.append(tt)
        rul.append(u.rul[tt])
        health.append(u.health[tt])
        life.append(tt / u.T)
        cond.append(u.condition[tt])
        mode.append(np.full(n, u.fault_mode))
        start.append(start[-1] + n)
    return Windows(
        X=np.concatenate(Xs).astype(np.float32),
        unit=np.concatenate(unit),
        t=np.concatenate(t),
        rul=np.concatenate(rul).astype(float),
        health=np.concatenate(health),
        life=np.concatenate(life),
        condition=np.concatenate(cond),
        fault_mode=np.concatenate(mode),
        start=np.asarray(start),
    )


def prepare(ds: Dataset, window: int) -> Prepared:
    """Drop channels flat within every condition, z-score per condition (multi-condition data), MinMax to [0, 1]."""
    ctrain, ctest, chold = _condition_labels(ds)
    S = np.concatenate([u.sensors for u in ds.train])
    C = np.concatenate(ctrain)
    n_c = int(C.max()) + 1
    within_std = np.stack([S[C == j].std(0) for j in range(n_c)])  # (n_c, channels)
    keep = np.where(within_std.max(0) > 1e-8)[0]
    mean = np.stack([S[C == j][:, keep].mean(0) for j in range(n_c)])
    std = within_std[:, keep] + 1e-8

    def zscore(u: Unit, c: np.ndarray) -> np.ndarray:
        x = u.sensors[:, keep]
        return (x - mean[c]) / std[c] if n_c > 1 else x

    ztrain = [zscore(u, c) for u, c in zip(ds.train, ctrain, strict=True)]
    ztest = [zscore(u, c) for u, c in zip(ds.test, ctest, strict=True)]
    zhold = [zscore(u, c) for u, c in zip(ds.holdout, chold, strict=True)]
    Z = np.concatenate(ztrain)
    lo, hi = Z.min(0), Z.max(0)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    strain = [(z - lo) / span for z in ztrain]
    stest = [(z - lo) / span for z in ztest]
    shold = [(z - lo) / span for z in zhold]
    return Prepared(
        train=_windows(ds.train, strain, window),
        test=_windows(ds.test, stest, window),
        holdout=_windows(ds.holdout, shold, window) if ds.holdout else None,
        train_cycles=strain,
        test_cycles=stest,
        holdout_cycles=shold,
        channels=keep,
        n_conditions=ds.n_conditions,
    )

"""Triplet sampler: precomputed per-(unit, group) index ranges vs the released per-item candidate rebuild.

    PYTHONPATH=. .venv/bin/python bench/progression_sampler.py --n-units 100 --anchors 2000

Both samplers run on the same FD001-like training windows in one process (contention cancels out). The per-item
sampler is timed on ``--anchors`` anchors and extrapolated linearly to one epoch (it is O(N) per anchor);
the vectorised sampler is timed on every window. Also prints the time of one STEP training epoch.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from compute.progression.config import StepConfig
from compute.progression.data import make_dataset
from compute.progression.model import TripletSampler, make_groups, naive_sample
from compute.progression.preprocess import prepare
from compute.progression.train import train_encoder


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-units", type=int, default=100)
    ap.add_argument("--anchors", type=int, default=2000)
    a = ap.parse_args()
    torch.set_num_threads(1)
    W = prepare(make_dataset("fd001", a.n_units, seed=0), 10).train
    n = len(W.unit)
    group, key, margin = make_groups(W.rul, W.life, "rul")
    rng = np.random.default_rng(0)

    t0 = time.perf_counter()
    sampler = TripletSampler(W.unit, group, key, margin)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    sampler.sample(np.arange(n), rng)
    t_vec = time.perf_counter() - t0

    sub = rng.choice(n, size=min(a.anchors, n), replace=False)
    t0 = time.perf_counter()
    naive_sample(W.unit, group, key, margin, sub, rng)
    t_naive = (time.perf_counter() - t0) * n / len(sub)

    cfg = StepConfig(epochs=1)
    t0 = time.perf_counter()
    train_encoder(W, cfg)
    t_epoch = time.perf_counter() - t0

    print(f"FD001-like, {a.n_units} units, N = {n} training windows (one epoch = N anchors)")
    print(f"  vectorised sampler: build {t_build * 1e3:8.1f} ms + sample one epoch {t_vec * 1e3:8.1f} ms")
    print(f"  per-item rebuild  : one epoch (extrapolated from {len(sub)} anchors) {t_naive:8.2f} s")
    print(
        f"  speed-up per epoch: {t_naive / (t_build + t_vec):8.0f}x (incl. build), {t_naive / t_vec:8.0f}x (sampling)"
    )
    print(f"  one STEP training epoch with the vectorised sampler: {t_epoch:6.2f} s")


if __name__ == "__main__":
    main()

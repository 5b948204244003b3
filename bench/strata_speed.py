"""strata benchmarks, side by side in one process (contention cancels in the ratios).

1. Neighbourhood attention: dense masked SDPA vs gather fallback, forward + backward, at growing token counts.
2. Cost per simulated day at one grid: spectral moist solver vs the tile emulator's blended global step.

Run: .venv/bin/python bench/strata_speed.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compute.strata.data import GeneratorConfig, MoistShallowWater  # noqa: E402
from compute.strata.model import ModelConfig, TileModel  # noqa: E402
from compute.strata.na import na_dense, na_gather  # noqa: E402
from compute.strata.rollout import global_step  # noqa: E402


def _time(fn, reps: int = 3) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps


def bench_na() -> None:
    print("NA fwd+bwd (B=1, heads=4, hd=16, kernel 5):  tokens | dense s | gather s | dense/gather")
    for shape in [(1, 16, 16), (1, 32, 32), (4, 24, 24)]:
        n = int(np.prod(shape))
        kern = (5, 5, 5)
        qkv = [torch.randn(1, 4, n, 16, requires_grad=True) for _ in range(3)]

        def run(f, qkv=qkv, shape=shape, kern=kern):
            return lambda: torch.autograd.grad(f(*qkv, shape, kern).sum(), qkv)

        td, tg = _time(run(na_dense)), _time(run(na_gather))
        print(f"  {n:6d} | {td:7.4f} | {tg:8.4f} | {td / tg:6.2f}")


def bench_cost(nlat: int = 32, tile: int = 16, overlap: int = 4) -> None:
    torch.set_default_dtype(torch.float64)
    sw = MoistShallowWater(GeneratorConfig(nlat=nlat, nlon=2 * nlat, dt=600.0 if nlat <= 32 else 300.0))
    torch.set_default_dtype(torch.float32)
    state = sw.initial_state()
    steps_per_frame = round(600.0 / sw.cfg.dt)
    hist: list = []
    t_solver = _time(lambda: sw.run(state, steps_per_frame, hist), reps=5)
    model = TileModel(ModelConfig(width=64, heads=4, depth=3, rope_length=np.pi / nlat * 2)).eval()
    xn = np.random.default_rng(0).normal(size=(5, 1, nlat, 2 * nlat)).astype(np.float32)
    lats = np.linspace(np.pi / 2, -np.pi / 2, nlat)
    lons = np.linspace(0, 2 * np.pi, 2 * nlat, endpoint=False)
    t_emu = _time(lambda: global_step(model, xn, lats, lons, tile, overlap, "cosine", np.ones(5, np.float32)), reps=3)
    per_day = 144
    print(f"cost per simulated day at {nlat}×{2 * nlat} (10-min frames, 1 thread):")
    print(f"  solver   {t_solver * per_day:8.2f} s/day")
    print(f"  emulator {t_emu * per_day:8.2f} s/day  (width 64, depth 3, tile {tile}, overlap {overlap})")
    print(f"  emulator/solver speed ratio = {t_solver / t_emu:.3f}×  (paper: ≈50× energy efficiency vs SCREAM)")


if __name__ == "__main__":
    torch.set_num_threads(1)
    bench_na()
    bench_cost(32)
    bench_cost(64, tile=32, overlap=8)

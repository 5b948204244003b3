"""Benchmark: vectorised replicate simulator vs a per-replicate loop; LP bounds vs closed forms.

Run: .venv/bin/python bench/causal_samplesize_sim.py   (both sides of each ratio run in this one process)
"""

from __future__ import annotations

import time

import numpy as np

from compute.causal_samplesize import bounds as B
from compute.causal_samplesize import lp
from compute.causal_samplesize.sampling import sample_theta


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    th = B.theta_from_joint(rng.dirichlet(np.ones(8)))
    n, reps = 1000, 2000

    def vectorised() -> None:
        thh = sample_theta(th, n, n, n, reps, rng)
        B.tian_pearl(thh, "PNS")

    def loop() -> None:
        for _ in range(reps):
            e1 = rng.binomial(n, th[0]) / n
            e0 = rng.binomial(n, th[1]) / n
            o = rng.multinomial(n, th[2:]) / n
            B.tian_pearl(np.array([e1, e0, *o]), "PNS")

    tv, tl = _best(vectorised), _best(loop)
    print(f"replicates/s  vectorised {reps / tv:12.0f}   per-replicate loop {reps / tl:10.0f}   ratio {tl / tv:7.1f}x")

    thetas = B.theta_from_joint(rng.dirichlet(np.ones(8), size=200))
    fam = lp.binary_family("PNS")

    def lp_all() -> None:
        for t in thetas:
            b = lp.binary_b_from_theta(t)
            lp.lp_bound(fam, b, "lower")
            lp.lp_bound(fam, b, "upper")

    def closed_loop() -> None:
        for t in thetas:
            B.tian_pearl(t, "PNS")

    def closed_vec() -> None:
        B.tian_pearl(thetas, "PNS")

    t_lp, t_cl, t_cv = _best(lp_all), _best(closed_loop), _best(closed_vec)
    k = len(thetas)
    print(
        f"PNS bounds per θ  LP (HiGHS, 2 solves) {1e6 * t_lp / k:9.1f} µs   closed form {1e6 * t_cl / k:7.1f} µs   "
        f"closed form vectorised {1e6 * t_cv / k:6.2f} µs   LP/closed {t_lp / t_cl:6.1f}x   "
        f"LP/vectorised {t_lp / t_cv:8.0f}x"
    )
    fam3 = lp.Family(3, 3, "PNS")
    b3 = fam3.data_from_joint(fam3.random_joint(rng))
    t3 = _best(lambda: [lp.lp_bound(fam3, b3, s) for s in ("lower", "upper")])
    print(f"3x3 multi-valued PNS bounds (81 cells, LP lower+upper): {1e3 * t3:.1f} ms")


if __name__ == "__main__":
    main()

"""Benchmark of the verifiable_dp cryptography and protocols; prints side-by-side ratios (one process).

Usage: .venv/bin/python bench/verifiable_dp_crypto.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere: repo root on the path

import time

import numpy as np

from compute.verifiable_dp import accounting as acc
from compute.verifiable_dp import group as grp
from compute.verifiable_dp import proofs
from compute.verifiable_dp.protocol import run_protocol


def per_second(fn, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return n / (time.perf_counter() - t0)


def main(quick: bool) -> None:
    n = 200 if quick else 1000
    s = grp.rand_scalar()
    p = grp.commit(5, 7)
    print("== group operations (per second) ==")
    ops = {
        "variable-base k·P": per_second(lambda: grp.mul(s, p), n),
        "fixed-base k·h": per_second(lambda: grp.mul_h(s), n),
        "point addition": per_second(lambda: grp.add(p, grp.G), n),
    }
    for k, v in ops.items():
        print(f"  {k:<22} {v:9.0f}/s  ({1e6 / v:6.1f} µs)  ratio to variable-base: {v / ops['variable-base k·P']:.1f}x")
    print("== bit commitments + OR-proofs ==")
    r = grp.rand_scalar()
    c = grp.commit(1, r)
    pf = proofs.prove_bit(c, 1, r, b"bench")
    cp = per_second(lambda: proofs.prove_bit(grp.commit(1, r), 1, r, b"bench"), n // 2)
    vf = per_second(lambda: proofs.verify_bit(c, pf, b"bench"), n // 2)
    print(f"  commit+prove  {cp:7.0f}/s ({1e3 / cp:.2f} ms)")
    print(f"  verify        {vf:7.0f}/s ({1e3 / vf:.2f} ms)   prove/verify throughput ratio {cp / vf:.2f}")
    empty = lambda m: [np.zeros(0, dtype=np.int8) for _ in range(m)]  # noqa: E731
    print("== SN-VBM end-to-end time vs m (n_b = 16 coins, no records) ==")
    base = None
    for m in (2, 3, 5, 8) if not quick else (2, 3):
        res = run_protocol("sn_vbm", m, empty(m), 1.0, 1e-6, n_coins=16)
        base = base or res.seconds
        ratio = res.seconds / base
        print(f"  m={m}: {res.seconds:6.2f} s (dealer {res.dealer_seconds:5.2f} s)  ratio to m=2: {ratio:5.2f}", end="")
        print(f"  accepted={res.accepted}")
    print("== SN-VBM end-to-end time vs n_b (m = 3) ==")
    base = None
    for nb in (8, 16, 32, 64) if not quick else (8, 16):
        res = run_protocol("sn_vbm", 3, empty(3), 1.0, 1e-6, n_coins=nb)
        base = base or res.seconds
        print(
            f"  n_b={nb:3d}: {res.seconds:6.2f} s  per coin {res.seconds / nb * 1e3:6.1f} ms  ratio to n_b=8: "
            f"{res.seconds / base:5.2f}"
        )
    eps, delta, m = (2.0, 1e-6, 3) if quick else (1.0, 1e-6, 3)
    print(f"== mechanisms at equal (ε, δ) = ({eps:g}, {delta:g}), m = {m} ==")
    best: dict[str, object] = {}
    for _ in range(1 if quick else 2):  # interleaved rounds, min time per mechanism: load spikes cancel
        for mech in ("sn_vbm", "sn_vlm", "independent"):
            res = run_protocol(mech, m, empty(m), eps, delta, k=24)
            if mech not in best or res.seconds < best[mech].seconds:
                best[mech] = res
    rows = list(best.items())
    t_vbm = rows[0][1].seconds
    sd_vbm = rows[0][1].noise_sd
    for mech, res in rows:
        print(
            f"  {mech:<12} coins {res.n_coins:5d}  time {res.seconds:6.2f} s (×{res.seconds / t_vbm:4.2f} of SN-VBM)"
            f"  noise sd {res.noise_sd:6.3f} (×{res.noise_sd / sd_vbm:4.2f})  accepted={res.accepted}"
        )
    print(f"  (n_b = {acc.binom_coins(eps, delta)}, L = {acc.dlap_digits(eps)}, k = 24)")


if __name__ == "__main__":
    main("--quick" in sys.argv)

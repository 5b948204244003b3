"""Closed-form protocol load (preprocessing + randomness generation, excluding records and release).

SN-VBM: n_b shared coins, m·n_b committed bits with OR-proofs, (m−1)·n_b Beaver multiplications.
SN-VLM: 2Lk shared coins and (m−1)·2Lk + 2L(k−1) multiplications (XOR folds + comparison circuits).
Independent binomial: m·n_b own coins, no multiplications.  Independent DLap: m·2Lk own coins, m·2L(k−1)
multiplications (one comparison circuit set per prover).  Each multiplication consumes one dealt triple and one
sacrificed triple (6m dealer commitments) and 5m openings (d, e, and ρ, σ, 0 of the sacrifice).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from . import accounting as acc
from . import group as grp
from .proofs import PROOF_BYTES

OPENING_BYTES = 2 * grp.SCALAR_BYTES


@dataclass
class Load:
    shared_coins: int
    bit_commitments: int
    multiplications: int
    dealer_commitments: int
    openings: int
    public_coins: int
    bytes_provers: int
    bytes_verifier: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def coin_count(mechanism: str, m: int, eps: float, delta: float, k: int, n_coins: int = 0) -> int:
    """Number of shared (or, for the independent baseline, own) fair coins the noise needs."""
    if mechanism in ("sn_vbm", "central_binomial"):
        return n_coins or acc.binom_coins(eps, delta)
    if mechanism in ("sn_vlm", "central_laplace"):
        return 2 * acc.dlap_digits(eps) * k
    if mechanism == "independent":
        return m * (n_coins or acc.binom_coins(eps, delta))
    if mechanism == "independent_laplace":
        return m * 2 * acc.dlap_digits(eps) * k
    raise ValueError(mechanism)


def protocol_load(mechanism: str, m: int, eps: float, delta: float, k: int = 24, n_coins: int = 0) -> Load:
    """The load formulas above (checked against the protocol's counters in the tests)."""
    n_c = coin_count(mechanism, m, eps, delta, k, n_coins)
    if mechanism == "sn_vbm":
        bits, mults = m * n_c, (m - 1) * n_c
    elif mechanism == "sn_vlm":
        L = acc.dlap_digits(eps)
        bits, mults = m * n_c, (m - 1) * n_c + 2 * L * (k - 1)
    elif mechanism == "independent":
        bits, mults = n_c, 0
    elif mechanism == "independent_laplace":
        bits, mults = n_c, m * 2 * acc.dlap_digits(eps) * (k - 1)
    else:
        raise ValueError(f"{mechanism} has no protocol load")
    openings = 5 * m * mults
    return Load(
        shared_coins=n_c,
        bit_commitments=bits,
        multiplications=mults,
        dealer_commitments=6 * m * mults,
        openings=openings,
        public_coins=n_c,
        bytes_provers=bits * (grp.POINT_BYTES + PROOF_BYTES) + openings * OPENING_BYTES,
        bytes_verifier=grp.SCALAR_BYTES * mults + (n_c + 7) // 8,
    )

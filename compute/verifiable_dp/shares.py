"""Additively shared, committed values and the linear algebra on them (Pedersen homomorphism).

A ``Shared`` value x = Σ_p x_p (mod ℓ) is held as prover p's private share (x_p, r_p) and the *public*
per-prover commitment C_p = Com(x_p; r_p).  Linear maps act on shares and commitments alike:
Com(Σ k_i x_i + c) = Σ k_i C_i + c·g (the public constant goes to prover 0's share).  Per-prover
commitments let the verifier name which prover failed an opening.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import group as grp


@dataclass
class Shared:
    """x = Σ_p val[p]; prover p privately holds (val[p], rnd[p]); coms[p] = Com(val[p]; rnd[p]) is public."""

    val: list[int]
    rnd: list[int]
    coms: list[bytes]

    @property
    def m(self) -> int:
        return len(self.coms)

    def value(self) -> int:
        """The shared value mod ℓ (simulation only: no single party can compute it)."""
        return sum(self.val) % grp.ELL

    def commitment(self) -> bytes:
        """Com(x; Σ r_p) = Σ_p C_p."""
        return grp.point_sum(self.coms)


def small_mul(k: int, p: bytes) -> bytes:
    """k·p with cheap paths for |k| ≤ 4 (additions) and a variable-base multiplication otherwise."""
    if k == 0 or p == grp.IDENTITY:
        return grp.IDENTITY
    a = abs(k)
    if a <= 4:
        acc = p
        for _ in range(a - 1):
            acc = grp.add(acc, p)
        return grp.neg(acc) if k < 0 else acc
    return grp.mul(k, p)


def zero(m: int) -> Shared:
    """The public constant 0 (identity commitments)."""
    return Shared([0] * m, [0] * m, [grp.IDENTITY] * m)


def private_input(m: int, p: int, x: int, r: int, com: bytes) -> Shared:
    """A value known to prover p alone: its share is (x, r), every other share is (0, 0) with the identity."""
    s = zero(m)
    s.val[p], s.rnd[p], s.coms[p] = x % grp.ELL, r, com
    return s


def lin(terms: list[tuple[int, Shared]], const: int = 0) -> Shared:
    """Σ_i k_i·x_i + const, share-wise; prover 0 adds the public constant (commitment + const·g)."""
    m = terms[0][1].m if terms else 1
    val, rnd, coms = [0] * m, [0] * m, [grp.IDENTITY] * m
    for k, x in terms:
        for p in range(m):
            val[p] = (val[p] + k * x.val[p]) % grp.ELL
            rnd[p] = (rnd[p] + k * x.rnd[p]) % grp.ELL
            coms[p] = grp.add(coms[p], small_mul(k, x.coms[p]))
    if const % grp.ELL:
        val[0] = (val[0] + const) % grp.ELL
        coms[0] = grp.add(coms[0], small_mul(const, grp.G) if abs(const) <= 4 else grp.mul_g(const))
    return Shared(val, rnd, coms)


def deal(x: int, m: int) -> Shared:
    """Fresh random additive shares of x with fresh commitment randomness (the dealer's sharing)."""
    val = [grp.rand_scalar() for _ in range(m - 1)]
    val.append((x - sum(val)) % grp.ELL)
    rnd = [grp.rand_scalar() for _ in range(m)]
    return Shared(val, rnd, [grp.commit(v, r) for v, r in zip(val, rnd)])

"""Additively shared, committed values and the linear algebra on them (Pedersen homomorphism).

A ``Shared`` value x = Σ_p x_p (mod ℓ) is held as prover p's private share (x_p, r_p).  Publicly there is
the per-prover commitment C_p = Com(x_p; r_p) and the aggregate C = Σ_p C_p = Com(x; Σ r_p).  Linear maps act
on shares and commitments alike: Com(Σ k_i x_i + c) = Σ k_i C_i + c·g (the public constant goes to prover 0).

The verifier checks openings against the aggregate (one variable-base multiplication per linear term instead
of m); per-prover commitments of derived values are computed lazily, only to name a cheater after a failed
aggregate check.
"""

from __future__ import annotations

from . import group as grp


def small_mul(k: int, p: bytes) -> bytes:
    """k·p with cheap paths for |k| ≤ 4 (additions) and a variable-base multiplication otherwise."""
    k = grp.to_signed(k)
    if k == 0 or p == grp.IDENTITY:
        return grp.IDENTITY
    a = abs(k)
    if a <= 4:
        acc = p
        for _ in range(a - 1):
            acc = grp.add(acc, p)
        return grp.neg(acc) if k < 0 else acc
    return grp.mul(k, p)


def _const_point(c: int) -> bytes:
    return small_mul(c, grp.G)


class Shared:
    """x = Σ_p val[p]; prover p privately holds (val[p], rnd[p]); ``agg`` and ``coms`` are public."""

    __slots__ = ("_coms", "_const", "_terms", "agg", "rnd", "val")

    def __init__(
        self,
        val: list[int],
        rnd: list[int],
        coms: list[bytes] | None = None,
        agg: bytes | None = None,
        terms: list[tuple[int, Shared]] | None = None,
        const: int = 0,
    ) -> None:
        self.val, self.rnd = val, rnd
        self._coms, self._terms, self._const = coms, terms, const
        self.agg = agg if agg is not None else grp.point_sum(coms or [])

    @property
    def m(self) -> int:
        return len(self.val)

    @property
    def coms(self) -> list[bytes]:
        """Per-prover commitments C_p (derived lazily from the linear expression that produced this value)."""
        if self._coms is None:
            coms = [grp.IDENTITY] * self.m
            for k, x in self._terms or []:
                xc = x.coms
                for p in range(self.m):
                    coms[p] = grp.add(coms[p], small_mul(k, xc[p]))
            if self._const % grp.ELL:
                coms[0] = grp.add(coms[0], _const_point(self._const))
            self._coms = coms
        return self._coms

    def value(self) -> int:
        """The shared value mod ℓ (simulation only: no single party can compute it)."""
        return sum(self.val) % grp.ELL

    def commitment(self) -> bytes:
        """Com(x; Σ r_p) = Σ_p C_p."""
        return self.agg


def zero(m: int) -> Shared:
    """The public constant 0 (identity commitments)."""
    return Shared([0] * m, [0] * m, [grp.IDENTITY] * m, grp.IDENTITY)


def private_input(m: int, p: int, x: int, r: int, com: bytes) -> Shared:
    """A value known to prover p alone: its share is (x, r), every other share is (0, 0) with the identity."""
    val, rnd, coms = [0] * m, [0] * m, [grp.IDENTITY] * m
    val[p], rnd[p], coms[p] = x % grp.ELL, r, com
    return Shared(val, rnd, coms, com)


def lin(terms: list[tuple[int, Shared]], const: int = 0) -> Shared:
    """Σ_i k_i·x_i + const, share-wise; prover 0 adds the public constant (commitment + const·g)."""
    m = terms[0][1].m if terms else 1
    val, rnd = [0] * m, [0] * m
    agg = grp.IDENTITY
    for k, x in terms:
        for p in range(m):
            val[p] = (val[p] + k * x.val[p]) % grp.ELL
            rnd[p] = (rnd[p] + k * x.rnd[p]) % grp.ELL
        agg = grp.add(agg, small_mul(k, x.agg))
    if const % grp.ELL:
        val[0] = (val[0] + const) % grp.ELL
        agg = grp.add(agg, _const_point(const))
    return Shared(val, rnd, None, agg, terms, const)


def deal(x: int, m: int) -> Shared:
    """Fresh random additive shares of x with fresh commitment randomness (the dealer's sharing)."""
    val = [grp.rand_scalar() for _ in range(m - 1)]
    val.append((x - sum(val)) % grp.ELL)
    rnd = [grp.rand_scalar() for _ in range(m)]
    return Shared(val, rnd, [grp.commit(v, r) for v, r in zip(val, rnd, strict=False)])

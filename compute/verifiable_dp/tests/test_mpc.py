"""Known answers for Beaver multiplication, sacrifice, XOR folding and the comparison circuit."""

from __future__ import annotations

import random

import pytest

from compute.verifiable_dp import group as grp
from compute.verifiable_dp.protocol import Rejected, Session, less_than_plain
from compute.verifiable_dp.shares import deal, lin


def test_beaver_product_opens_to_uw() -> None:
    s = Session(3)
    s.deal_triples(3)
    for u, w in ((6, 7), (0, 9), (grp.ELL - 2, 3)):
        prod = s.mul(deal(u, 3), deal(w, 3), "t")
        assert s.open(prod, "check", "product") == u * w % grp.ELL
        assert prod.commitment() == grp.commit(u * w, sum(prod.rnd))
    assert s.checks["triple sacrifice"] == 3


def test_linear_ops_are_homomorphic() -> None:
    x, y = deal(11, 4), deal(-3, 4)
    z = lin([(5, x), (-2, y)], const=7)
    assert z.value() == (55 + 6 + 7) % grp.ELL
    assert z.commitment() == grp.commit(55 + 6 + 7, sum(z.rnd))


def test_corrupted_triple_is_caught_by_sacrifice() -> None:
    s = Session(2, cheat="bad_triple")
    with pytest.raises(Rejected) as exc:
        s.deal_triples(1)
    assert exc.value.check == "triple sacrifice"


def test_wrong_beaver_opening_is_caught_and_attributed() -> None:
    s = Session(3, cheat="wrong_opening", cheater=2)
    s.deal_triples(1)
    with pytest.raises(Rejected) as exc:
        s.mul(deal(1, 3), deal(1, 3), "t")
    assert exc.value.check == "Beaver openings" and exc.value.detail.startswith("prover 2")


@pytest.mark.parametrize("m", [2, 3, 4, 5])
def test_xor_fold_exhaustive(m: int) -> None:
    """b = ⊕_p a_p for all 2^m patterns of committed bits (prefix tree of xor_step: Σ_p 2^(p+1) multiplications)."""
    s = Session(m)
    s.deal_triples(sum(2 ** (p + 1) for p in range(1, m)) + m - 1)
    bits = {(p, b): s.commit_bit(p, b, "coin", 2 * p + b) for p in range(m) for b in (0, 1)}
    level = {(b,): bits[(0, b)] for b in (0, 1)}
    for p in range(1, m):
        level = {(*pre, b): s.xor_step(u, bits[(p, b)], f"{pre}+{b}") for pre, u in level.items() for b in (0, 1)}
    assert len(level) == 2**m
    for pattern, b in level.items():
        assert b.value() == sum(pattern) % 2, pattern
        assert b.commitment() == grp.commit(sum(pattern) % 2, sum(b.rnd))
    pattern = [random.Random(m).randrange(2) for _ in range(m)]
    folded = s.xor_fold([bits[(p, b)] for p, b in enumerate(pattern)], "fold")  # the method the protocol uses
    assert folded.value() == sum(pattern) % 2


@pytest.mark.parametrize("k", range(1, 9))
def test_comparison_recurrence_exhaustive(k: int) -> None:
    rnd = random.Random(k)
    for t in {0, 1, 2**k - 1, *(rnd.randrange(2**k) for _ in range(6))}:
        for u in range(2**k):
            bits = [(u >> i) & 1 for i in range(k)]
            assert less_than_plain(bits, t) == int(u < t), (k, t, u)
    with pytest.raises(ValueError):
        less_than_plain([0] * k, 2**k)


def test_shared_comparison_circuit_exhaustive_k3() -> None:
    k, m = 3, 2
    s = Session(m)
    ts = [0, 3, 5]
    s.deal_triples((k - 1) * 2**k * len(ts))
    for u in range(2**k):
        us = [deal((u >> i) & 1, m) for i in range(k)]
        for t in ts:
            assert s.less_than(us, t, "lt").value() == int(u < t)

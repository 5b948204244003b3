"""Known answers for the Pedersen group and the CDS OR-proof."""

from __future__ import annotations

import dataclasses

import pytest
from nacl import bindings as na

from compute.verifiable_dp import group as grp
from compute.verifiable_dp import proofs
from compute.verifiable_dp.shares import small_mul


def test_generators_are_distinct_main_subgroup_points() -> None:
    assert grp.G != grp.H and grp.is_valid(grp.G) and grp.is_valid(grp.H)
    # (ℓ−1)·g + g = identity: g has order ℓ (raw libsodium, no special-casing involved)
    lm1 = na.crypto_scalarmult_ed25519_noclamp((grp.ELL - 1).to_bytes(32, "little"), grp.G)
    assert na.crypto_core_ed25519_add(lm1, grp.G) == grp.IDENTITY


@pytest.mark.parametrize(
    ("x", "r", "y", "s"),
    [(3, 5, 7, 11), (0, 0, 0, 0), (0, 9, 4, 0), (grp.ELL - 1, 1, 1, grp.ELL - 1), (-5, 2, 5, -2)],
)
def test_commitment_homomorphism_including_zero_and_identity(x: int, r: int, y: int, s: int) -> None:
    lhs = grp.add(grp.commit(x, r), grp.commit(y, s))
    assert lhs == grp.commit(x + y, r + s)
    assert grp.sub(lhs, grp.commit(y, s)) == grp.commit(x, r)


def test_identity_and_zero_special_cases() -> None:
    assert grp.commit(0, 0) == grp.IDENTITY
    assert grp.commit(grp.ELL, grp.ELL) == grp.IDENTITY  # ℓ ≡ 0
    assert grp.mul(0, grp.G) == grp.IDENTITY and grp.mul(5, grp.IDENTITY) == grp.IDENTITY
    assert grp.add(grp.G, grp.neg(grp.G)) == grp.IDENTITY
    assert grp.is_valid(grp.IDENTITY) and not grp.is_valid(b"\x00" * 32) and not grp.is_valid(b"\x01" * 31)


def test_scalar_mult_paths_agree() -> None:
    c = grp.commit(123, 456)
    for k in (-4, -3, -2, -1, 1, 2, 3, 4, 5, 1000, grp.ELL - 2):
        assert small_mul(k, c) == grp.mul(k, c)
    assert grp.mul(7, grp.H) == grp.mul_h(7)


def test_signed_decoding_near_ell() -> None:
    assert grp.to_signed(grp.ELL - 1) == -1
    assert grp.to_signed(-17) == -17
    assert grp.to_signed(grp.ELL // 2) == grp.ELL // 2
    assert grp.to_signed(grp.ELL // 2 + 1) == grp.ELL // 2 + 1 - grp.ELL < 0
    assert grp.commit(-5, 3) == grp.commit(grp.ELL - 5, 3)


@pytest.mark.parametrize("b", [0, 1])
def test_or_proof_completeness(b: int) -> None:
    r = grp.rand_scalar()
    c = grp.commit(b, r)
    assert proofs.verify_bit(c, proofs.prove_bit(c, b, r, b"ctx"), b"ctx")


def test_or_proof_rejects_non_bits_tampering_and_replay() -> None:
    for v in (2, -1, 5):
        r = grp.rand_scalar()
        c = grp.commit(v, r)
        for _ in range(3):
            assert not proofs.verify_bit(c, proofs.prove_bit(c, v, r, b"ctx"), b"ctx")
    r = grp.rand_scalar()
    c = grp.commit(1, r)
    pf = proofs.prove_bit(c, 1, r, b"session|p1|coin|7")
    assert proofs.verify_bit(c, pf, b"session|p1|coin|7")
    assert not proofs.verify_bit(c, pf, b"session|p2|coin|7")  # replay under another context
    assert not proofs.verify_bit(grp.commit(1, r + 1), pf, b"session|p1|coin|7")  # other statement
    for fld, bad in (("e0", pf.e0 + 1), ("e1", pf.e1 + 1), ("z0", pf.z0 + 1), ("z1", pf.z1 + 1),
                     ("a0", grp.add(pf.a0, grp.H)), ("a1", grp.add(pf.a1, grp.H)), ("a0", b"\x02" * 32)):  # fmt: skip
        assert not proofs.verify_bit(c, dataclasses.replace(pf, **{fld: bad}), b"session|p1|coin|7"), fld
    # shifting challenge mass between branches keeps e0 + e1 but breaks the equations
    assert not proofs.verify_bit(c, dataclasses.replace(pf, e0=pf.e0 + 1, e1=pf.e1 - 1), b"session|p1|coin|7")

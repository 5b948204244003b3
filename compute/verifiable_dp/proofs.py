"""Non-interactive Σ-OR proof that a Pedersen commitment holds a bit (Cramer–Damgård–Schoenmakers 1994).

Statements Y₀ = C and Y₁ = C − g; the prover knows r with Y_b = r·h.  The false branch o is simulated
(A_o = z_o·h − e_o·Y_o for random e_o, z_o), the real branch uses A_b = w·h, the Fiat–Shamir challenge is
e = H(ctx ‖ C ‖ A₀ ‖ A₁) mod ℓ, e_b = e − e_o and z_b = w + e_b·r.  The verifier checks
e₀ + e₁ = H(…), z₀·h = A₀ + e₀·C and z₁·h = A₁ + e₁·(C − g).  ctx binds session, prover, phase and index,
so a proof cannot be replayed under another context.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import group as grp

PROOF_BYTES = 2 * grp.POINT_BYTES + 4 * grp.SCALAR_BYTES


@dataclass(frozen=True)
class BitProof:
    """(A₀, A₁, e₀, e₁, z₀, z₁)."""

    a0: bytes
    a1: bytes
    e0: int
    e1: int
    z0: int
    z1: int


def _challenge(ctx: bytes, c: bytes, a0: bytes, a1: bytes) -> int:
    return grp.hash_to_scalar(b"paperlab/verifiable_dp/bit-or-proof", ctx, c, a0, a1)


def prove_bit(c: bytes, b: int, r: int, ctx: bytes) -> BitProof:
    """Prove that c = Com(b; r) with b ∈ {0, 1}.  (If b is not a bit the proof is still produced — it fails.)"""
    ys = (c, grp.sub(c, grp.G))
    real = 1 if b == 1 else 0
    fake = 1 - real
    e_f, z_f, w = grp.rand_scalar(), grp.rand_scalar(), grp.rand_scalar()
    a = [b"", b""]
    a[fake] = grp.sub(grp.mul_h(z_f), grp.mul(e_f, ys[fake]))
    a[real] = grp.mul_h(w)
    e = _challenge(ctx, c, a[0], a[1])
    e_r = (e - e_f) % grp.ELL
    z_r = (w + e_r * r) % grp.ELL
    es = [0, 0]
    zs = [0, 0]
    es[real], es[fake] = e_r, e_f
    zs[real], zs[fake] = z_r, z_f
    return BitProof(a[0], a[1], es[0], es[1], zs[0], zs[1])


def verify_bit(c: bytes, proof: BitProof, ctx: bytes) -> bool:
    """Check the OR-proof for commitment c under context ctx."""
    if not (grp.is_valid(c) and grp.is_valid(proof.a0) and grp.is_valid(proof.a1)):
        return False
    e = _challenge(ctx, c, proof.a0, proof.a1)
    if (proof.e0 + proof.e1) % grp.ELL != e:
        return False
    if grp.mul_h(proof.z0) != grp.add(proof.a0, grp.mul(proof.e0, c)):
        return False
    return grp.mul_h(proof.z1) == grp.add(proof.a1, grp.mul(proof.e1, grp.sub(c, grp.G)))

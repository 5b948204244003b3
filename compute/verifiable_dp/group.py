"""Pedersen commitments over the prime-order subgroup of edwards25519 (PyNaCl / libsodium).

Points are 32-byte compressed encodings; scalars are Python ints mod ℓ.  Only the *noclamp*
scalar multiplications are used (the clamped ones rewrite the scalar and break homomorphism).
libsodium refuses scalar 0 and identity results, so both are special-cased here.

Com(x; r) = x·g + r·h, with g = from_uniform(SHA-512("paperlab/verifiable_dp/g")[:32]) (nothing up
my sleeve) and h = the standard base point (so r·h uses the fast fixed-base multiplication).
"""

from __future__ import annotations

import hashlib
import secrets

from nacl import bindings as _na

ELL = 2**252 + 27742317777372353535851937790883648493  # order ℓ of the main subgroup
IDENTITY = b"\x01" + b"\x00" * 31  # encoding of the neutral element (y = 1, x = 0)
POINT_BYTES = 32
SCALAR_BYTES = 32

G = _na.crypto_core_ed25519_from_uniform(hashlib.sha512(b"paperlab/verifiable_dp/g").digest()[:32])
H = _na.crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(32, "little"))  # the standard base point


def rand_scalar() -> int:
    """A uniform scalar in [0, ℓ) from the OS CSPRNG (protocol randomness, never numpy/random)."""
    return secrets.randbelow(ELL)


def _sb(k: int) -> bytes:
    return (k % ELL).to_bytes(32, "little")


def is_valid(p: bytes) -> bool:
    """A received point is valid if it is the identity or a main-subgroup point (libsodium check)."""
    if not isinstance(p, (bytes, bytearray)) or len(p) != POINT_BYTES:
        return False
    return p == IDENTITY or bool(_na.crypto_core_ed25519_is_valid_point(bytes(p)))


def add(p: bytes, q: bytes) -> bytes:
    """p + q."""
    if p == IDENTITY:
        return q
    if q == IDENTITY:
        return p
    return _na.crypto_core_ed25519_add(p, q)


def sub(p: bytes, q: bytes) -> bytes:
    """p − q."""
    if q == IDENTITY:
        return p
    if p == q:
        return IDENTITY
    return _na.crypto_core_ed25519_sub(p, q)


def neg(p: bytes) -> bytes:
    """−p."""
    return sub(IDENTITY, p) if p != IDENTITY else IDENTITY


def mul(k: int, p: bytes) -> bytes:
    """k·p for a main-subgroup point p (variable base, ≈150 µs)."""
    k %= ELL
    if k == 0 or p == IDENTITY:
        return IDENTITY
    if k == 1:
        return p
    if k == ELL - 1:
        return neg(p)
    return _na.crypto_scalarmult_ed25519_noclamp(_sb(k), p)


def mul_h(k: int) -> bytes:
    """k·h with h the standard base point (fixed base, ≈40 µs)."""
    k %= ELL
    if k == 0:
        return IDENTITY
    return _na.crypto_scalarmult_ed25519_base_noclamp(_sb(k))


def mul_g(k: int) -> bytes:
    """k·g; cheap for k ∈ {0, ±1} (bits), a variable-base multiplication otherwise."""
    return mul(k, G)


def commit(x: int, r: int) -> bytes:
    """Pedersen commitment Com(x; r) = x·g + r·h (additively homomorphic, perfectly hiding)."""
    return add(mul_g(x), mul_h(r))


def check_opening(c: bytes, x: int, r: int) -> bool:
    """Does (x, r) open c?"""
    return commit(x, r) == c


def point_sum(points: list[bytes]) -> bytes:
    """Σ points."""
    acc = IDENTITY
    for p in points:
        acc = add(acc, p)
    return acc


def to_signed(x: int) -> int:
    """Decode a value mod ℓ as a signed integer: values above ℓ/2 are negative."""
    x %= ELL
    return x - ELL if x > ELL // 2 else x


def scalar_bytes(k: int) -> bytes:
    """32-byte little-endian encoding of k mod ℓ (for hashing / byte counts)."""
    return _sb(k)


def hash_to_scalar(*parts: bytes) -> int:
    """H(parts) mod ℓ with H = SHA-512 and length-prefixed parts (unambiguous encoding)."""
    h = hashlib.sha512()
    for part in parts:
        h.update(len(part).to_bytes(4, "little"))
        h.update(part)
    return int.from_bytes(h.digest(), "little") % ELL

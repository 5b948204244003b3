"""Tian–Pearl bounds for PNS, PN, PS as max/min of explicit terms (binary X, Y).

Parameter vector θ = (e1, e0, o11, o10, o01, o00) with e1 = P(y_x), e0 = P(y_{x'}),
o_ab = P(X=a, Y=b).  Every bound endpoint is L = max_k T_k (lower) or min_k T_k (upper) of terms

    T_k(θ) = (c_k + a_kᵀθ) / (d_k + b_kᵀθ)                                    (spec §2)

with b_k = 0, d_k = 1 for affine terms (PNS) and b_k selecting o11 (PN) or o00 (PS) for ratio terms.
Tian & Pearl (2000), eqs. for PNS/PN/PS; the endpoint's active term gives the delta-method gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

E1, E0, O11, O10, O01, O00 = range(6)
THETA_NAMES = ("e1", "e0", "o11", "o10", "o01", "o00")
FAMILIES = ("PNS", "PN", "PS")
DEN_MIN = 1e-12  # denominators at or below this are treated as zero (ratio bound undefined)


def _vec(**coef: float) -> np.ndarray:
    v = np.zeros(6)
    for name, c in coef.items():
        v[THETA_NAMES.index(name)] = c
    return v


@dataclass(frozen=True)
class Endpoint:
    """One bound endpoint L = max_k T_k (sense "max") or min_k T_k (sense "min")."""

    family: str
    side: str  # "lower" or "upper"
    labels: tuple[str, ...]
    c: np.ndarray  # (K,)
    a: np.ndarray  # (K, 6)
    d: np.ndarray  # (K,)
    b: np.ndarray  # (K, 6)

    @property
    def sense(self) -> str:
        return "max" if self.side == "lower" else "min"

    @property
    def affine(self) -> np.ndarray:
        """(K,) bool: term is affine in θ (denominator constant)."""
        return ~np.any(self.b != 0, axis=1)

    @property
    def name(self) -> str:
        return f"{self.family} {self.side}"

    def terms(self, theta: np.ndarray) -> np.ndarray:
        """T_k(θ) for θ of shape (..., 6) → (..., K); ratio terms with a zero denominator give NaN."""
        theta = np.asarray(theta, dtype=float)
        num = self.c + theta @ self.a.T
        den = self.d + theta @ self.b.T
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > DEN_MIN, num / np.where(den > DEN_MIN, den, 1.0), np.nan)

    def gradients(self, theta: np.ndarray) -> np.ndarray:
        """∇_θ T_k = (a_k·den − num·b_k)/den², shape (..., K, 6)."""
        theta = np.asarray(theta, dtype=float)
        num = (self.c + theta @ self.a.T)[..., None]
        den = (self.d + theta @ self.b.T)[..., None]
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.a * den - num * self.b) / den**2

    def value(self, theta: np.ndarray) -> np.ndarray:
        """L(θ) = max_k or min_k T_k(θ), shape (...,); NaN if a ratio denominator vanishes."""
        t = self.terms(theta)
        return t.max(axis=-1) if self.sense == "max" else t.min(axis=-1)

    def gaps(self, theta: np.ndarray) -> np.ndarray:
        """|L − T_k| ≥ 0 per term, shape (..., K) (0 for the active term(s))."""
        t = self.terms(theta)
        return np.abs(self.value(theta)[..., None] - t)


def _endpoint(family: str, side: str, rows: list[tuple[str, float, np.ndarray, float, np.ndarray]]) -> Endpoint:
    labels = tuple(r[0] for r in rows)
    return Endpoint(
        family,
        side,
        labels,
        c=np.array([r[1] for r in rows]),
        a=np.array([r[2] for r in rows]),
        d=np.array([r[3] for r in rows]),
        b=np.array([r[4] for r in rows]),
    )


Z6 = np.zeros(6)


def endpoint(family: str, side: str) -> Endpoint:
    """The Tian–Pearl endpoint as a term table.

    PNS ≥ max{0, e1−e0, P(y)−e0, e1−P(y)};  PNS ≤ min{e1, 1−e0, o11+o00, e1−e0+o10+o01}
    PN  ∈ [max{0, (P(y)−e0)/o11}, min{1, (1−e0−o00)/o11}]
    PS  ∈ [max{0, (e1−P(y))/o00}, min{1, (e1−o11)/o00}]          with P(y) = o11 + o01.
    """
    family = family.upper()
    o11 = _vec(o11=1.0)
    o00 = _vec(o00=1.0)
    table = {
        ("PNS", "lower"): [
            ("0", 0.0, Z6, 1.0, Z6),
            ("e1 − e0", 0.0, _vec(e1=1, e0=-1), 1.0, Z6),
            ("P(y) − e0", 0.0, _vec(o11=1, o01=1, e0=-1), 1.0, Z6),
            ("e1 − P(y)", 0.0, _vec(e1=1, o11=-1, o01=-1), 1.0, Z6),
        ],
        ("PNS", "upper"): [
            ("e1", 0.0, _vec(e1=1), 1.0, Z6),
            ("1 − e0", 1.0, _vec(e0=-1), 1.0, Z6),
            ("o11 + o00", 0.0, _vec(o11=1, o00=1), 1.0, Z6),
            ("e1 − e0 + o10 + o01", 0.0, _vec(e1=1, e0=-1, o10=1, o01=1), 1.0, Z6),
        ],
        ("PN", "lower"): [
            ("0", 0.0, Z6, 1.0, Z6),
            ("(P(y) − e0)/o11", 0.0, _vec(o11=1, o01=1, e0=-1), 0.0, o11),
        ],
        ("PN", "upper"): [
            ("1", 1.0, Z6, 1.0, Z6),
            ("(1 − e0 − o00)/o11", 1.0, _vec(e0=-1, o00=-1), 0.0, o11),
        ],
        ("PS", "lower"): [
            ("0", 0.0, Z6, 1.0, Z6),
            ("(e1 − P(y))/o00", 0.0, _vec(e1=1, o11=-1, o01=-1), 0.0, o00),
        ],
        ("PS", "upper"): [
            ("1", 1.0, Z6, 1.0, Z6),
            ("(e1 − o11)/o00", 0.0, _vec(e1=1, o11=-1), 0.0, o00),
        ],
    }
    key = (family, side)
    if key not in table:
        raise ValueError(f"unknown endpoint {family} {side}: family ∈ {FAMILIES}, side ∈ (lower, upper)")
    return _endpoint(family, side, table[key])


def tian_pearl(theta: np.ndarray, family: str = "PNS") -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) Tian–Pearl bounds of ``family`` at θ (..., 6)."""
    return endpoint(family, "lower").value(theta), endpoint(family, "upper").value(theta)


# ------------------------------------------------------------------------------------------------
# Truth from the joint of (X, Y_1, Y_0)
# ------------------------------------------------------------------------------------------------
def cell_index(x: int, y1: int, y0: int) -> int:
    """Index of the cell (x, y_x=1 outcome y1, y_{x'} outcome y0) in an 8-vector."""
    return 4 * x + 2 * y1 + y0


def theta_from_joint(p: np.ndarray) -> np.ndarray:
    """θ = (e1, e0, o11, o10, o01, o00) from joint cell probabilities p (..., 8) over (X, Y_1, Y_0).

    Consistency: Y = Y_1 when X = 1 and Y = Y_0 when X = 0.
    """
    q = np.asarray(p, dtype=float).reshape(*np.shape(p)[:-1], 2, 2, 2)  # [x, y1, y0]
    e1 = q[..., :, 1, :].sum(axis=(-1, -2))
    e0 = q[..., :, :, 1].sum(axis=(-1, -2))
    o11 = q[..., 1, 1, :].sum(axis=-1)
    o10 = q[..., 1, 0, :].sum(axis=-1)
    o01 = q[..., 0, :, 1].sum(axis=-1)
    o00 = q[..., 0, :, 0].sum(axis=-1)
    return np.stack([e1, e0, o11, o10, o01, o00], axis=-1)


def true_poc(p: np.ndarray) -> dict[str, np.ndarray]:
    """True PNS = P(y_x, y'_{x'}), PN = P(y'_{x'} | x, y), PS = P(y_x | x', y') from the joint (..., 8)."""
    q = np.asarray(p, dtype=float).reshape(*np.shape(p)[:-1], 2, 2, 2)
    th = theta_from_joint(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "PNS": q[..., :, 1, 0].sum(axis=-1),
            "PN": q[..., 1, 1, 0] / th[..., O11],
            "PS": q[..., 0, 1, 0] / th[..., O00],
        }


def consistent(theta: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """Experimental/observational compatibility: o11 ≤ e1 ≤ 1 − o10 and o01 ≤ e0 ≤ 1 − o00."""
    th = np.asarray(theta, dtype=float)
    return (
        (th[..., O11] <= th[..., E1] + tol)
        & (th[..., E1] <= 1 - th[..., O10] + tol)
        & (th[..., O01] <= th[..., E0] + tol)
        & (th[..., E0] <= 1 - th[..., O00] + tol)
    )


def from_conditionals(e1: float, e0: float, p_y_given_x: float, p_y_given_xp: float, p_x: float) -> np.ndarray:
    """θ from JudeasRx-style inputs E(y|do(x)), E(y|do(x')), P(y|x), P(y|x'), P(x)."""
    o11 = p_y_given_x * p_x
    o10 = (1 - p_y_given_x) * p_x
    o01 = p_y_given_xp * (1 - p_x)
    o00 = (1 - p_y_given_xp) * (1 - p_x)
    return np.array([e1, e0, o11, o10, o01, o00])

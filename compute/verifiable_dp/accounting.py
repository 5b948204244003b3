"""Exact privacy accounting for the binomial and the realized (quantized, truncated) discrete Laplace.

Sensitivity-1 counting.  For an integer noise pmf P, the hockey-stick divergence between X+1 and X is
δ(ε) = Σ_k max(0, P(k) − e^ε·P(k−1)); both pmfs used here are symmetric, so one direction suffices.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

TAIL_BITS = 40  # truncate the geometric where α^{2^L} < 2^-40


def binom_log_pmf(n: int) -> np.ndarray:
    """log P(k) for Bin(n, ½), k = 0..n, computed in log space with gammaln (shape (n+1,))."""
    k = np.arange(n + 1)
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1) - n * math.log(2.0)


def hockey_stick(pmf: np.ndarray, eps: float) -> float:
    """δ(ε) = Σ_k max(0, P(k) − e^ε·P(k−1)) for a pmf on consecutive integers (zero outside)."""
    p = np.concatenate([pmf, [0.0]])
    q = np.concatenate([[0.0], pmf])
    return float(np.maximum(0.0, p - math.exp(eps) * q).sum())


def binom_delta(n: int, eps: float) -> float:
    """Exact δ(ε) of the Bin(n, ½) mechanism (log-space terms, so large n does not underflow)."""
    lp = binom_log_pmf(n)
    lp_prev = np.concatenate([[-np.inf], lp[:-1]])
    # P(k) − e^ε P(k−1) = P(k)(1 − exp(ε + lp_prev − lp)); positive only where the ratio is below 1
    ratio = np.exp(np.minimum(eps + lp_prev - lp, 0.0))
    terms = np.exp(lp) * (1.0 - ratio)
    terms[0] = math.exp(lp[0])  # P(0) − e^ε·0; also P(n+1) = 0 contributes nothing
    return float(terms.sum())


def binom_coins(eps: float, delta: float) -> int:
    """Smallest even n with δ_Bin(n)(ε) ≤ δ: doubling, then bisection over even n (δ decreases in n)."""
    hi = 2
    while binom_delta(hi, eps) > delta:
        hi *= 2
    lo = hi // 2 if hi > 2 else 0  # lo fails (or is 0), hi passes
    while hi - lo > 2:
        mid = (lo + hi) // 2
        mid -= mid % 2
        if mid <= lo:
            mid = lo + 2
        if binom_delta(mid, eps) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def coins_odo(eps: float, delta: float) -> float:
    """ODO-style approximation 8·ln(2/δ)/ε²."""
    return 8.0 * math.log(2.0 / delta) / eps**2


def coins_bc_plot(eps: float, delta: float) -> float:
    """The 100·ln(2/δ)/ε² used in Biswas–Cormode's plotting script."""
    return 100.0 * math.log(2.0 / delta) / eps**2


# ------------------------------------------------------------------------------------------------
# discrete Laplace from binary digits
# ------------------------------------------------------------------------------------------------
def dlap_digits(eps: float, tail_bits: int = TAIL_BITS) -> int:
    """L = the smallest L with α^{2^L} < 2^-tail_bits, α = e^-ε (so 2^L·ε > tail_bits·ln 2)."""
    need = tail_bits * math.log(2.0) / eps
    L = 0
    while need >= 2.0**L:
        L += 1
    return L


def digit_probs(eps: float, L: int) -> np.ndarray:
    """p_i = α^{2^i}/(1 + α^{2^i}): G = Σ 2^i d_i with independent d_i ~ Bern(p_i) is geometric (shape (L,))."""
    a = np.exp(-eps * (2.0 ** np.arange(L)))
    return a / (1.0 + a)


def thresholds(eps: float, L: int, k: int) -> list[int]:
    """Public comparison thresholds T_i = round(p_i·2^k), so d_i = 1[U < T_i] with U uniform on [0, 2^k)."""
    return [round(float(p) * 2**k) for p in digit_probs(eps, L)]


def digits_pmf(probs: np.ndarray) -> np.ndarray:
    """pmf of G = Σ_i 2^i d_i, d_i ~ Bern(probs[i]) independent, on 0..2^L−1 (exact convolution)."""
    pmf = np.array([1.0])
    for i, p in enumerate(probs):
        step = 2**i
        new = np.zeros(len(pmf) + step)
        new[: len(pmf)] += (1.0 - p) * pmf
        new[step : step + len(pmf)] += p * pmf
        pmf = new
    return pmf


def dlap_pmf_from_digits(probs: np.ndarray) -> tuple[np.ndarray, int]:
    """pmf of Z = G₁ − G₂ (G₁, G₂ iid digit sums) and the offset: pmf[j] = P(Z = j − offset)."""
    g = digits_pmf(probs)
    return np.convolve(g, g[::-1]), len(g) - 1


def realized_dlap(eps: float, k: int | None, tail_bits: int = TAIL_BITS) -> tuple[np.ndarray, int]:
    """The noise SN-VLM actually samples: digits quantized to p̂_i = T_i/2^k (k=None: unquantized)."""
    L = dlap_digits(eps, tail_bits)
    probs = digit_probs(eps, L) if k is None else np.array(thresholds(eps, L, k), dtype=float) / 2**k
    return dlap_pmf_from_digits(probs)


def realized_dlap_delta(eps_target: float, k: int | None, eps_eval: float | None = None) -> float:
    """δ at ε_eval (default the target ε) of the realized discrete Laplace built for ε_target at precision k."""
    pmf, _ = realized_dlap(eps_target, k)
    return hockey_stick(pmf, eps_target if eps_eval is None else eps_eval)


def dlap_sd(eps: float) -> float:
    """Standard deviation of DLap(α = e^-ε): √(2α)/(1−α)."""
    a = math.exp(-eps)
    return math.sqrt(2 * a) / (1 - a)


def binom_sd(n: int) -> float:
    """Standard deviation of Bin(n, ½) − n/2: √n/2."""
    return math.sqrt(n) / 2.0

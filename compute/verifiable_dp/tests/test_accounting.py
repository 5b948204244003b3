"""Known answers for the exact privacy accounting and the digit construction of the discrete Laplace."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom

from compute.verifiable_dp import accounting as acc


def test_binomial_delta_hand_computed() -> None:
    # Bin(2, ½) = (¼, ½, ¼): δ(0) = Σ max(0, P(k) − P(k−1)) = ¼ + ¼; δ(ln 2) = ¼ + 0 + 0
    assert acc.binom_delta(2, 0.0) == pytest.approx(0.5, abs=1e-15)
    assert acc.binom_delta(2, math.log(2)) == pytest.approx(0.25, abs=1e-15)
    assert acc.hockey_stick(np.array([0.25, 0.5, 0.25]), math.log(2)) == pytest.approx(0.25, abs=1e-15)


@pytest.mark.parametrize("n", [10, 80, 500])
def test_log_space_delta_matches_direct_sum(n: int) -> None:
    pmf = binom.pmf(np.arange(n + 1), n, 0.5)
    for eps in (0.1, 0.5, 1.0):
        assert acc.binom_delta(n, eps) == pytest.approx(acc.hockey_stick(pmf, eps), rel=1e-9, abs=1e-300)


def test_delta_decreases_in_n() -> None:
    ds = [acc.binom_delta(n, 0.5) for n in range(2, 400, 2)]
    assert all(a > b for a, b in itertools.pairwise(ds))


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-6), (0.5, 1e-6), (2.0, 1e-3), (0.25, 1e-9), (4.0, 1e-6)])
def test_coin_count_is_minimal_even(eps: float, delta: float) -> None:
    n = acc.binom_coins(eps, delta)
    assert n % 2 == 0 and acc.binom_delta(n, eps) <= delta < acc.binom_delta(n - 2, eps)


def test_coin_count_matches_linear_search() -> None:
    n = next(n for n in range(2, 2000, 2) if acc.binom_delta(n, 1.0) <= 1e-4)
    assert acc.binom_coins(1.0, 1e-4) == n
    # the exact count sits below the ODO approximation, which sits below Biswas–Cormode's plotting constant
    assert n < acc.coins_odo(1.0, 1e-4) < acc.coins_bc_plot(1.0, 1e-4)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0])
def test_unquantized_digits_give_truncated_geometric(eps: float) -> None:
    L = acc.dlap_digits(eps)
    assert math.exp(-eps * 2**L) < 2**-40 <= math.exp(-eps * 2 ** (L - 1))
    g = acc.digits_pmf(acc.digit_probs(eps, L))
    a = math.exp(-eps)
    x = np.arange(2**L)
    ref = (1 - a) * a**x / (1 - a ** (2**L))
    np.testing.assert_allclose(g, ref, rtol=0, atol=1e-12)


def test_ideal_dlap_ratio_and_delta_limit() -> None:
    eps = 0.7
    pmf, off = acc.realized_dlap(eps, None)
    z = np.arange(0, 20)
    ratio = pmf[off + z] / pmf[off + z + 1]
    np.testing.assert_allclose(ratio, math.exp(eps), rtol=1e-9)  # P(z)/P(z+1) = 1/α for z ≥ 0
    assert acc.hockey_stick(pmf, eps) < 1e-10  # only the 2^-40 truncation remains
    sd = math.sqrt(float(np.sum(pmf * (np.arange(len(pmf)) - off) ** 2)))
    assert sd == pytest.approx(acc.dlap_sd(eps), rel=1e-9)


def test_realized_dlap_meets_delta_at_default_k_and_fails_at_small_k() -> None:
    for eps in (0.1, 1.0, 2.0):
        d8, d24, d40 = (acc.realized_dlap_delta(eps, k) for k in (8, 24, 40))
        assert d8 > 1e-5 > 1e-6 >= d24 > d40


def test_vlm_beats_vbm_error_and_coins_at_small_eps() -> None:
    for eps in (0.1, 0.25, 0.5, 1.0, 2.0):
        assert acc.dlap_sd(eps) < acc.binom_sd(acc.binom_coins(eps, 1e-6))
    assert acc.binom_coins(0.1, 1e-6) > 10 * 2 * acc.dlap_digits(0.1) * 24

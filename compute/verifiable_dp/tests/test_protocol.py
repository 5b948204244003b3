"""End-to-end protocol: completeness, soundness (every cheat named), noise distribution, load formulas."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from compute.verifiable_dp.load import protocol_load
from compute.verifiable_dp.protocol import CHEATS, run_protocol

EXPECTED_CHECK = {
    "non_bit_coin": "coin bit proofs",
    "wrong_opening": "Beaver openings",
    "bad_triple": "triple sacrifice",
    "coin_changed": "final openings",
    "wrong_final_share": "final openings",
}


def _records(m: int, n: int = 6, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2, n).astype(np.int8) for _ in range(m)]


@pytest.mark.parametrize(
    "mechanism", ["sn_vbm", "sn_vlm", "independent", "independent_laplace", "central_binomial", "central_laplace"]
)
def test_honest_runs_are_accepted(mechanism: str) -> None:
    m = 2 if mechanism in ("sn_vlm", "independent_laplace") else 3
    recs = _records(m)
    res = run_protocol(mechanism, m, recs, 4.0, 1e-6, k=3, n_coins=4)
    assert res.accepted is (None if mechanism.startswith("central") else True), res.failed_check
    assert res.true_count == sum(int(r.sum()) for r in recs)
    bound = {"sn_vbm": 2, "independent": 6, "central_binomial": 2, "independent_laplace": 2 * 7}.get(mechanism, 7)
    assert abs(res.noise) <= bound
    dlap = 0.1949638810627126  # √(2α)/(1−α) at ε = 4
    sd = {"sn_vbm": 1.0, "independent": 3**0.5, "central_binomial": 1.0, "independent_laplace": 2**0.5 * dlap}
    assert res.noise_sd == pytest.approx(sd.get(mechanism, dlap), rel=1e-12)  # √n_b/2 = 1 at n_b = 4


@pytest.mark.parametrize("mechanism", ["sn_vbm", "sn_vlm"])
@pytest.mark.parametrize("cheat", [c for c in CHEATS if c != "none"])
def test_every_cheat_is_rejected_with_the_check_named(mechanism: str, cheat: str) -> None:
    m = 3 if mechanism == "sn_vbm" else 2
    res = run_protocol(mechanism, m, _records(m, 2), 4.0, 1e-6, k=2, n_coins=2, cheat=cheat, cheater=1)
    assert res.cheat_injected and res.accepted is False
    assert res.failed_check == EXPECTED_CHECK[cheat]
    if cheat != "bad_triple":
        assert res.failed_detail.startswith("prover 1")


@pytest.mark.parametrize("cheat", ["wrong_opening", "bad_triple"])
def test_independent_laplace_baseline_is_sound(cheat: str) -> None:
    res = run_protocol("independent_laplace", 2, _records(2, 2), 4.0, 1e-6, k=2, cheat=cheat, cheater=0)
    assert res.accepted is False and res.failed_check == EXPECTED_CHECK[cheat]


def test_fiat_shamir_coins_complete() -> None:
    assert run_protocol("sn_vbm", 2, _records(2, 2), 4.0, 1e-6, n_coins=2, fiat_shamir_coins=True).accepted


def test_released_noise_is_binomial_chi2() -> None:
    """Σ_j c_j − n_b/2 over 40 runs with n_b = 2 against Bin(2, ½) − 1 (p > 0.001; expected counts 10/20/10)."""
    noise = [run_protocol("sn_vbm", 2, _records(2, 0), 1.0, 1e-6, n_coins=2).noise for _ in range(40)]
    counts = np.array([sum(z == v for z in noise) for v in (-1, 0, 1)])
    assert counts.sum() == 40
    assert chisquare(counts, 40 * np.array([0.25, 0.5, 0.25])).pvalue > 1e-3


@pytest.mark.parametrize(
    ("mechanism", "m"), [("sn_vbm", 3), ("sn_vlm", 2), ("independent", 3), ("independent_laplace", 2)]
)
def test_load_formulas_match_protocol_counters(mechanism: str, m: int) -> None:
    res = run_protocol(mechanism, m, _records(m, 0), 4.0, 1e-6, k=3, n_coins=4)
    ld = protocol_load(mechanism, m, 4.0, 1e-6, k=3, n_coins=4)
    c = res.counters
    assert res.accepted
    assert (ld.shared_coins if mechanism.startswith("independent") else c.shared_coins) == ld.shared_coins
    assert c.bit_proofs == ld.bit_commitments and c.multiplications == ld.multiplications
    assert c.dealer_commitments == ld.dealer_commitments and c.public_coins == ld.public_coins
    assert c.openings == ld.openings + m  # + the m final openings
    assert c.bytes_provers == ld.bytes_provers + m * 64 and c.bytes_verifier == ld.bytes_verifier

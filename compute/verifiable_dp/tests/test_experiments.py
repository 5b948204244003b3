"""Known answers the experiments must reproduce (seeded Monte Carlo; seconds)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute.core.reporter import MemoryReporter
from compute.verifiable_dp import accounting as acc
from compute.verifiable_dp.run import error_vs_provers, privacy_curves


def test_shared_error_flat_and_independent_error_grows_as_sqrt_m() -> None:
    rep = MemoryReporter()
    params = {"m_max": 8, "eps_list": [1.0], "delta": 1e-6, "k": 24, "mc_draws": 20_000, "seed": 3}
    summary = error_vs_provers(params, rep)
    for mech in ("vbm", "vlm"):
        assert summary[f"slope_ind_{mech}_e1"] == pytest.approx(0.5, abs=0.05)
    for key, sd in (("sn_vbm", acc.binom_sd(80)), ("sn_vlm", acc.dlap_sd(1.0))):
        ys = np.array(rep.values(f"rmse_mc/{key}_e1"))
        # every m within 4 % of the analytic sd (≈ 4 Monte Carlo standard errors at 2·10⁴ draws)
        np.testing.assert_allclose(ys, sd, rtol=0.04)
    np.testing.assert_allclose(rep.values("rmse_an/ind_vbm_e1"), np.sqrt(np.arange(1, 9)) * math.sqrt(80) / 2)
    assert summary["vlm_over_vbm_rmse_e1"] == pytest.approx(acc.dlap_sd(1.0) / acc.binom_sd(80), rel=1e-4)


def test_privacy_experiment_reports_pass_and_fail() -> None:
    rep = MemoryReporter()
    summary = privacy_curves({"eps": 1.0, "delta": 1e-6, "k_list": [8, 24], "n_grid": 8, "seed": 0}, rep)
    assert summary["n_b"] == 80 and summary["L"] == 5
    meets = [r["meets δ"] for r in rep.tables["privacy"]["rows"]]
    assert meets == [True, False, True]  # binomial, k = 8, k = 24

"""Known answers: the replay sampler, the generator, ground-truth metrics, the scaling-law fitter, determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from compute.core.reporter import MemoryReporter
from compute.sae_replay.metrics import absorption, detection_proxy, mmcs, sparse_probe
from compute.sae_replay.replay import PoolSource, n_steps
from compute.sae_replay.run import replay_sweep
from compute.sae_replay.scaling import LawParams, fit_law, predict, recommend_buffer
from compute.sae_replay.synthetic import SparseFeatureGenerator


@pytest.mark.parametrize(("U", "R", "B"), [(1000, 4, 256), (512, 8, 1024), (4096, 1, 1024)])
def test_every_pool_row_is_seen_exactly_R_times(U: int, R: int, B: int) -> None:
    ps = PoolSource(torch.arange(U, dtype=torch.float32)[:, None], R, seed=1)
    T = U * R
    for _ in range(T // B):
        ps.next(B)
    ps.next(T - (T // B) * B) if T % B else None
    assert torch.equal(ps.counts, torch.full((U,), R))
    with pytest.raises(RuntimeError):
        ps.next(1)


def test_step_counts_equal_across_arms() -> None:
    T, B = 1 << 16, 1024
    assert {n_steps((T // R) * R, B) for R in (1, 4, 16, 64)} == {T // B}


def test_generator_firing_rates_and_hierarchy() -> None:
    gen = SparseFeatureGenerator(d=32, n_feat=128, n_hier=4, n_children=3, child_q=0.25, parent_p=0.2, seed=0)
    n = 40_000
    _, a = gen.sample(n, torch.Generator().manual_seed(0))
    on = (a > 0).numpy()
    rate = on.mean(0)
    se = np.sqrt(gen.rates * (1 - gen.rates) / n)
    assert np.all(np.abs(rate - gen.rates) <= 4.5 * se)  # binomial CI, every feature (Bonferroni-ish)
    assert gen.rates[0] == pytest.approx(0.16) and gen.rates[20] == pytest.approx(0.01)
    for h in gen.hierarchies:
        kids = on[:, h.children]
        assert not np.any(kids.any(1) & ~on[:, h.parent])  # child ⇒ parent
        assert kids.sum(1).max() <= 1  # children mutually exclusive


def test_expected_l0_of_the_default_generator() -> None:
    gen = SparseFeatureGenerator()
    assert 5.0 < gen.rates.sum() < 6.0  # "about 5–6 active features per sample"


def test_perfect_dictionary_gives_mmcs_one_recovery_one_absorption_zero() -> None:
    gen = SparseFeatureGenerator(d=32, n_feat=96, n_hier=4, parent_p=0.2, seed=1)
    _, a = gen.sample(5000, torch.Generator().manual_seed(2))
    W = gen.features.t().contiguous()  # decoder = true features, (d, n_feat)
    assert mmcs(gen.features, W) == {"mmcs": pytest.approx(1.0, abs=1e-6), "recovered": 1.0}
    res = absorption(gen.features, W, a, a, gen.hierarchies)  # the oracle code
    assert res["absorption"] == 0.0 and res["parent_silent"] == 0.0


def test_absorbed_dictionary_is_detected() -> None:
    """Child latents that carry the parent direction and a silent parent latent: absorption = 1."""
    gen = SparseFeatureGenerator(d=32, n_feat=96, n_hier=4, parent_p=0.2, seed=1)
    _, a = gen.sample(5000, torch.Generator().manual_seed(2))
    W = gen.features.t().clone()
    codes = a.clone()
    for h in gen.hierarchies:
        for c in h.children:
            w = gen.features[c] + gen.features[h.parent]
            W[:, c] = w / w.norm()
            codes[a[:, c] > 0, h.parent] = 0.0  # the parent latent is silent whenever a child fires
    assert absorption(gen.features, W, codes, a, gen.hierarchies)["absorption"] == pytest.approx(1.0)


def test_sparse_probe_and_detection_on_an_oracle_latent() -> None:
    g = torch.Generator().manual_seed(0)
    y = (torch.rand(2000, generator=g) < 0.3).long()
    z = torch.rand(2000, 20, generator=g)
    z[:, 7] = y.float() * 2.0  # latent 7 is the feature
    assert sparse_probe(z[:1000], y[:1000], z[1000:], y[1000:], 1, 2) == pytest.approx(1.0)
    labels = y.numpy()
    f = torch.zeros(2000, 20)
    f[:, 7] = z[:, 7]
    assert detection_proxy(f[:1000], labels[:1000], f[1000:], labels[1000:], top=20) == pytest.approx(1.0)


def test_fitter_recovers_law_parameters_from_noiseless_losses() -> None:
    true = LawParams(E=0.1, A=2.0, alpha=0.5, B=30.0, beta=0.4, R_star=15.0)
    g = np.array(
        list(itertools.product([256, 512, 1024, 2048], [2**10, 2**12, 2**14, 2**16], [1, 2, 4, 8, 16, 32, 64]))
    )
    N, U, R = g.T.astype(float)
    fit = fit_law(N, U, R, predict(true, N, U, R), n_starts=2)
    for k, v in true.as_dict().items():
        assert fit.params.as_dict()[k] == pytest.approx(v, rel=0.01), k


def test_buffer_rule_on_a_known_law() -> None:
    """With B = 0 there is nothing to gain from fresh data: the smallest allowed buffer is recommended."""
    p = LawParams(E=0.2, A=0.0, alpha=0.0, B=0.0, beta=0.5, R_star=15.0)
    assert recommend_buffer(p, 512, 2**20, 0.01, R_max=64)["storage_reduction"] == pytest.approx(64, rel=1e-6)
    # with B > 0 the rule returns a U at which the predicted loss is within (1 + x) of fresh, and no smaller U is
    p = LawParams(E=0.1, A=0.0, alpha=0.0, B=30.0, beta=0.4, R_star=15.0)
    r = recommend_buffer(p, 512, 2**20, 0.01)
    assert r["L_at_U"] <= 1.01 * r["L_fresh"] + 1e-12
    U2 = r["U"] * 0.99
    assert predict(p, 512, U2, 2**20 / U2) > 1.01 * r["L_fresh"]


def test_same_seed_gives_identical_metrics() -> None:
    params = {
        "source": "synthetic", "d": 16, "n_feat": 64, "noise": 0.01, "n_hier": 2, "arch": "topk", "m": 64, "k": 4,
        "batch": 256, "lr": 1e-2, "l0_coeff": 0.0, "n_eval_log2": 10, "n_evals": 1, "cache_tokens_log2": 17,
        "layer": 3, "t_log2": 11, "r_list": [4], "small_fresh": False, "fresh_seeds": 1, "tol_ev": 0.005, "seed": 3,
        "device": "cpu",
    }  # fmt: skip
    a = replay_sweep(params, MemoryReporter())
    b = replay_sweep(params, MemoryReporter())
    assert a == b

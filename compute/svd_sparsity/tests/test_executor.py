"""Executor exactness (spec §5): oracle / gate-first / density-1 / τ = −∞ equal dense; empty mask → residual only."""

from __future__ import annotations

import pytest
import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.svd_sparsity.executor import (
    FFNWeights,
    GatherFFN,
    MaskedFFN,
    ffn_dense,
    ffn_gate_first,
    ffn_gather,
    ffn_macs,
    ffn_predicted,
)
from compute.svd_sparsity.predictor import factorize


@pytest.fixture(scope="module")
def layer():
    gen = torch.Generator().manual_seed(0)
    d, d_ff = 32, 128
    W_g, W_u = torch.randn(d_ff, d, generator=gen) / d**0.5, torch.randn(d_ff, d, generator=gen) / d**0.5
    W_d = torch.randn(d, d_ff, generator=gen) / d_ff**0.5
    xs = torch.randn(20, d, generator=gen)
    return W_g, W_u, W_d, xs


def _ref(W_g, W_u, W_d, x):
    return W_d @ (torch.relu(W_g @ x) * (W_u @ x))


def test_oracle_gate_first_and_full_mask_equal_dense(layer) -> None:
    W_g, W_u, W_d, xs = layer
    w = FFNWeights.from_dense(W_g, W_u, W_d)
    for x in xs:
        ref = _ref(W_g, W_u, W_d, x)
        oracle = torch.nonzero(W_g @ x > 0).squeeze(1)
        torch.testing.assert_close(ffn_dense(w, x), ref, atol=1e-5, rtol=0)
        torch.testing.assert_close(ffn_gather(w, x, oracle), ref, atol=1e-5, rtol=0)
        torch.testing.assert_close(ffn_gate_first(w, W_g, x), ref, atol=1e-5, rtol=0)
        torch.testing.assert_close(ffn_gather(w, x, torch.arange(W_g.shape[0])), ref, atol=1e-5, rtol=0)


def test_threshold_minus_infinity_is_exactly_dense(layer) -> None:
    """Issue 12 'must show': with τ = −∞ every neuron is computed, so the sparse FFN equals the dense one."""
    W_g, W_u, W_d, xs = layer
    w = FFNWeights.from_dense(W_g, W_u, W_d)
    F = factorize(W_g, xs.repeat(4, 1) + 0.1 * torch.randn(80, xs.shape[1]), whiten=True)
    A, B = F.truncate(4)  # a poor low-rank predictor: τ = −∞ must still be exact
    for x in xs:
        y = ffn_predicted(w, x, A, B, torch.tensor(float("-inf")))
        assert torch.equal(y, ffn_gather(w, x, torch.arange(W_g.shape[0])))
        torch.testing.assert_close(y, _ref(W_g, W_u, W_d, x), atol=1e-5, rtol=0)


def test_reglu_zero_exactly_when_gate_nonpositive(layer) -> None:
    W_g, W_u, _, xs = layer
    g, u = xs @ W_g.T, xs @ W_u.T
    h = torch.relu(g) * u
    assert torch.equal(h == 0, (g <= 0) | (u == 0))
    assert not bool((u == 0).any())  # so h_i = 0 ⇔ g_i ≤ 0 here


def test_masked_ffn_in_the_model_oracle_exact_empty_mask_passes_residual() -> None:
    torch.manual_seed(0)
    model = TinyLM(LMConfig(vocab_size=50, d_model=32, n_layers=2, n_heads=2, d_ff=64, ffn="reglu", max_len=16))
    tok = torch.randint(0, 50, (3, 10))
    dense = model(tok)
    dense_ffns = [b.ffn for b in model.blocks]
    for b in model.blocks:
        b.ffn = MaskedFFN(b.ffn, lambda x, g: g > 0)
    torch.testing.assert_close(model(tok), dense, atol=1e-5, rtol=0)
    blk = model.blocks[0]
    blk.ffn = MaskedFFN(dense_ffns[0], lambda x, g: torch.zeros_like(g, dtype=torch.bool))
    x = torch.randn(2, 5, 32)
    from compute.core.lm.model import positions_from_valid, rope_cos_sin

    valid = torch.ones(2, 5, dtype=torch.bool)
    cos, sin = rope_cos_sin(positions_from_valid(valid), 16, 10000.0)
    mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))[None, None]
    out = blk(x, cos, sin, mask, None, 0)
    torch.testing.assert_close(out, x + blk.attn(blk.ln1(x), cos, sin, mask, None, 0), atol=1e-6, rtol=0)
    for b, f in zip(model.blocks, dense_ffns, strict=True):
        b.ffn = f


def test_gather_module_decode_matches_dense_module() -> None:
    torch.manual_seed(1)
    model = TinyLM(LMConfig(vocab_size=40, d_model=32, n_layers=1, n_heads=2, d_ff=64, ffn="reglu", max_len=16))
    x = torch.randn(1, 1, 32)
    ref = model.blocks[0].ffn(x)
    for mode in ("dense", "gate_first"):
        torch.testing.assert_close(GatherFFN(model.blocks[0].ffn, mode)(x), ref, atol=1e-5, rtol=0)
    xp = torch.randn(2, 7, 32)  # prefill path (exact dense)
    torch.testing.assert_close(GatherFFN(model.blocks[0].ffn, "svd")(xp), model.blocks[0].ffn(xp), atol=1e-5, rtol=0)


def test_mac_formula_matches_executor_operation_counts(layer, monkeypatch) -> None:
    """Count the MACs of every torch.mv the executors issue and compare with ffn_macs."""
    W_g, W_u, W_d, xs = layer
    d_ff, d = W_g.shape
    w = FFNWeights.from_dense(W_g, W_u, W_d)
    F = factorize(W_g, xs.repeat(4, 1) + 0.1 * torch.randn(80, d), whiten=True)
    A, B = F.truncate(8)
    count = {"macs": 0}
    mv = torch.mv

    def counting_mv(M: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        count["macs"] += M.shape[0] * M.shape[1]
        return mv(M, v)

    monkeypatch.setattr(torch, "mv", counting_mv)
    x = xs[0]
    ffn_dense(w, x)
    assert count["macs"] == ffn_macs(d, d_ff)
    count["macs"] = 0
    tau = torch.tensor(0.0)
    k = int((mv(A, mv(B, x)) > tau).sum())
    ffn_predicted(w, x, A, B, tau)
    assert count["macs"] == ffn_macs(d, d_ff, k, rank=8)
    count["macs"] = 0
    k_true = int((mv(W_g, x) > 0).sum())
    ffn_gate_first(w, W_g, x)
    assert count["macs"] == ffn_macs(d, d_ff, k_true, gate_first=True)

"""Known-answer tests of STARE's entropy analysis, selection, weights, gate and baselines (spec stare §5)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from compute.core.rl.loss import policy_loss
from compute.core.rl.plugins import LossContext, PluginChain
from compute.stare.entropy import entropy_from_logits, entropy_sensitivity, quadrant_index
from compute.stare.plugin import (
    ClipCovPlugin,
    KLCovPlugin,
    StarePlugin,
    StareSettings,
    adaptive_update,
    select_top_surprisal,
    stare_weights,
    token_covariance,
)
from compute.stare.run import band_stats, entropy_change_analysis


def _probs(z: torch.Tensor) -> torch.Tensor:
    return torch.softmax(z, -1)


# ---------------------------------------------------------------- entropy identity
def test_sensitivity_averages_to_zero_under_the_policy() -> None:
    g = torch.Generator().manual_seed(0)
    z = torch.randn(50, 12, generator=g, dtype=torch.float64) * 3
    p = _probs(z)
    S_all = torch.stack([entropy_sensitivity(z, torch.full((50,), a)) for a in range(12)], -1)  # [50, V]
    assert (p * S_all).sum(-1).abs().max() < 1e-12


def test_first_order_entropy_change_matches_finite_difference() -> None:
    """H(z + ηA(e_a − π)) − H(z) = ηA·S(a; π) + O(η²): η = 1e-5, rtol 1e-3."""
    g = torch.Generator().manual_seed(1)
    z = torch.randn(40, 9, generator=g, dtype=torch.float64) * 2
    a = torch.randint(0, 9, (40,), generator=g)
    A = torch.randn(40, generator=g, dtype=torch.float64)
    eta = 1e-5
    dz = eta * A[:, None] * (torch.nn.functional.one_hot(a, 9).double() - _probs(z))
    dh = entropy_from_logits(z + dz) - entropy_from_logits(z)
    pred = eta * A * entropy_sensitivity(z, a)
    big = pred.abs() > 1e-9  # relative tolerance is meaningless where ΔH ≈ 0
    assert big.sum() > 30
    torch.testing.assert_close(dh[big], pred[big], rtol=1e-3, atol=0)


def test_hand_computed_sensitivity_and_quadrants() -> None:
    """Two tokens, π = (3/4, 1/4): S(rare) = π_a(s_a − H) + Σπ²(log π + H) by hand; rare token ⇒ S > 0."""
    p = torch.tensor([0.75, 0.25], dtype=torch.float64)
    z = p.log()[None]
    H = -(p * p.log()).sum()
    c = (p * p * (p.log() + H)).sum()
    s_rare = 0.25 * (-math.log(0.25) - H) + c
    s_common = 0.75 * (-math.log(0.75) - H) + c
    assert float(entropy_sensitivity(z, torch.tensor([1]))) == pytest.approx(float(s_rare), abs=1e-12)
    assert float(entropy_sensitivity(z, torch.tensor([0]))) == pytest.approx(float(s_common), abs=1e-12)
    assert s_rare > 0 > s_common
    q = quadrant_index(
        torch.tensor([1.0, 1.0, -1.0, -1.0, 0.0]), torch.tensor([2.0, 0.1, 2.0, 0.1, 2.0]), torch.full((5,), 1.0)
    )
    assert q.tolist() == [0, 1, 2, 3, -1]


# ---------------------------------------------------------------- selection
@pytest.mark.parametrize("frac", [0.01, 0.1, 0.33, 0.5, 1.0])
def test_selection_size_subset_and_order(frac: float) -> None:
    g = torch.Generator().manual_seed(2)
    s = torch.rand(6, 11, generator=g)
    adv = torch.randn(6, 1, generator=g).expand(6, 11).clone()
    mask = (torch.rand(6, 11, generator=g) > 0.2).float()
    cand = mask.bool() & (adv > 0)
    sel = select_top_surprisal(s, cand, frac)
    n = int(cand.sum())
    assert int(sel.sum()) == max(1, math.ceil(frac * n))
    assert bool((sel <= cand).all())
    assert float(s[sel].min()) >= float(s[cand & ~sel].max()) if (cand & ~sel).any() else True
    assert not select_top_surprisal(s, torch.zeros_like(cand), frac).any()


def test_o1_and_c2_weights() -> None:
    g = torch.Generator().manual_seed(3)
    s = torch.rand(8, 10, generator=g)
    adv = torch.tensor([1.0, -1.0] * 4)[:, None].expand(8, 10).clone()
    mask = torch.ones(8, 10)
    w1, lp1, ln1 = stare_weights(s, adv, mask, 0.1, 1.1, 0.9, "O1")
    assert int(lp1.sum()) == 4 and not ln1.any()
    assert bool((w1[adv < 0] == 1).all()) and bool((w1[lp1] == 1.1).all())
    assert int((w1 != 1).sum()) == 4
    w2, lp2, ln2 = stare_weights(s, adv, mask, 0.1, 1.1, 0.9, "C2")
    assert bool((lp2 == lp1).all()) and int(ln2.sum()) == 4 and bool((ln2 <= (adv < 0)).all())
    assert bool((w2[ln2] == 0.9).all()) and int((w2 != 1).sum()) == 8


# ---------------------------------------------------------------- reductions and normalisation
def _ctx(seed: int = 4, ent: float = 0.5) -> tuple[LossContext, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    B, T = 6, 9
    old = -torch.rand(B, T, generator=g) * 3
    logp = (old + 0.3 * torch.randn(B, T, generator=g)).requires_grad_(True)
    adv = torch.randn(B, generator=g)[:, None].expand(B, T).clone()
    mask = (torch.rand(B, T, generator=g) > 0.25).float()
    batch = SimpleNamespace(old_entropy=torch.full((B, T), ent))
    ratio = torch.exp(logp.detach() - old)
    ctx = LossContext(
        logp,
        old,
        torch.zeros(B, T),
        -logp.detach(),
        adv,
        mask,
        ratio,
        torch.arange(B),
        [""] * B,
        torch.zeros(B),
        0,
        batch,
        None,
    )
    return ctx, logp


def _loss_and_grad(ctx: LossContext, logp: torch.Tensor, w: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    logp.grad = None
    loss, _, _ = policy_loss(logp, ctx.old_logp, ctx.adv, ctx.mask, w, 0.2, 0.28, 10.0)
    loss.backward()
    return loss.detach(), logp.grad.clone()


@pytest.mark.parametrize("case", ["gate_off", "unit_weights"])
def test_reduces_exactly_to_grpo_ds(case: str) -> None:
    ctx, logp = _ctx(ent=0.5)
    if case == "gate_off":  # H̄ = 0.5 ≥ H_tgt = 0.4
        plug = StarePlugin(StareSettings(target_entropy=0.4, variant="C2"))
    else:
        plug = StarePlugin(StareSettings(target_entropy=1.0, w_pos=1.0, m_neg=1.0, variant="C2"))
    tw = PluginChain([plug]).token_weights(ctx)
    assert (tw.weight is None) == (case == "gate_off")
    l0, g0 = _loss_and_grad(ctx, logp, None)
    l1, g1 = _loss_and_grad(ctx, logp, tw.weight)
    torch.testing.assert_close(l1, l0, atol=1e-7, rtol=0)
    torch.testing.assert_close(g1, g0, atol=1e-7, rtol=0)


def test_weights_scale_numerator_not_denominator() -> None:
    ctx, logp = _ctx()
    w = torch.rand(ctx.adv.shape, generator=torch.Generator().manual_seed(5)) + 0.5
    l1, _ = _loss_and_grad(ctx, logp, w)
    l2, _ = _loss_and_grad(ctx, logp, 2 * w)
    torch.testing.assert_close(l2, 2 * l1, atol=1e-6, rtol=1e-6)
    _, _, per_tok = policy_loss(logp.detach(), ctx.old_logp, ctx.adv, ctx.mask, w, 0.2, 0.28, 10.0)
    by_hand = (w * per_tok * ctx.mask).sum() / ctx.mask.sum()
    torch.testing.assert_close(l1, by_hand, atol=1e-6, rtol=1e-6)


def test_dual_clip_with_weights() -> None:
    """A < 0 and ρ → ∞: per-token loss = −A·c, times ω."""
    logp = torch.tensor([[10.0, 10.0]])
    loss, _, per_tok = policy_loss(
        logp,
        torch.zeros(1, 2),
        torch.tensor([[-0.7, -0.7]]),
        torch.ones(1, 2),
        torch.tensor([[1.0, 0.9]]),
        0.2,
        0.28,
        10.0,
    )
    torch.testing.assert_close(per_tok, torch.full((1, 2), 7.0))
    assert float(loss) == pytest.approx((7.0 + 0.9 * 7.0) / 2, abs=1e-5)


# ---------------------------------------------------------------- controller
def test_gate_switches_on_below_target_and_off_above() -> None:
    plug = StarePlugin(StareSettings(target_entropy=0.45))
    for step, ent, on in [(0, 0.5, False), (1, 0.4, True), (2, 0.6, False), (3, 0.1, True)]:
        ctx, _ = _ctx(ent=ent)
        ctx.step = step
        tw = plug.token_weights(ctx)
        assert tw.stats["stare/gate"] == float(on)
        assert (tw.weight is not None) == on
        if on:
            assert int((tw.weight != 1).sum()) == tw.stats["stare/L_pos"] > 0


def test_automatic_target_is_kappa_times_first_batch_entropy() -> None:
    plug = StarePlugin(StareSettings(kappa=0.5))
    ctx, _ = _ctx(ent=0.8)
    plug.token_weights(ctx)
    assert plug.h_tgt == pytest.approx(0.4) and not plug.gate_on


def test_adaptive_schedule_stays_in_bounds() -> None:
    s = StareSettings(alpha=0.07, w_max=1.5, m_min=0.5)
    w, m = 1.1, 0.9
    for _ in range(50):  # entropy too low: raise W, lower M
        w, m = adaptive_update(w, m, 0.1, 0.3, s)
        assert 1.0 <= w <= 1.5 and 0.5 <= m <= 1.0
    assert (w, m) == (1.5, 0.5)
    for _ in range(50):
        w, m = adaptive_update(w, m, 0.9, 0.3, s)
        assert 1.0 <= w <= 1.5 and 0.5 <= m <= 1.0
    assert (w, m) == (1.0, 1.0)


def test_band_stats() -> None:
    hist = [{"entropy/mean": e, "stare/gate": float(e < 0.5)} for e in [1.0, 0.8, 0.5, 0.45, 0.62, 0.3]]
    b = band_stats(hist, 0.5)
    assert b["band_reached_step"] == 3 and b["within_band_after_reach"] == pytest.approx(2 / 4)
    assert b["gate_duty"] == pytest.approx(2 / 6)


# ---------------------------------------------------------------- baselines
def test_token_covariance_hand_case() -> None:
    adv = torch.tensor([[1.0, 1.0, -1.0, 5.0]])
    logp = torch.tensor([[-1.0, -3.0, -2.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 0.0]])  # Ā = 1/3, mean log π = −2
    cov = token_covariance(adv, logp, mask)
    torch.testing.assert_close(cov, torch.tensor([[2 / 3, -2 / 3, 0.0, 0.0]]))


def test_clip_cov_zeroes_only_qualifying_tokens() -> None:
    adv = torch.tensor([[2.0, 2.0, -2.0, -2.0]])
    logp = torch.tensor([[-0.1, -3.0, -3.0, -0.1]])  # Cov = (A − 0)(logp + 1.55): 2.9, −2.9, 2.9, −2.9
    ctx, _ = _ctx()
    ctx = LossContext(logp, logp, logp, -logp, adv, torch.ones(1, 4), torch.ones(1, 4), torch.zeros(1), [""], adv, 0)
    w = ClipCovPlugin(ratio=0.5, seed=0).token_weights(ctx).weight
    assert int((w == 0).sum()) == 2 and bool((w[0, [1, 3]] == 1).all())


def test_kl_cov_has_zero_gradient_on_policy() -> None:
    ctx, logp = _ctx()
    ctx.old_logp = logp.detach().clone()
    loss = KLCovPlugin(ratio=0.2).extra_loss(ctx)
    loss.backward()
    assert float(loss.detach()) == 0.0 and float(logp.grad.abs().sum()) == 0.0


# ---------------------------------------------------------------- analysis
def test_analysis_recovers_eta_for_a_logit_space_step() -> None:
    """A pure logit-space step z1 = z0 + ηA(e_a − π): η_eff = η, corr(ΔH, A·S) ≈ 1, linearisation slope ≈ 1."""
    g = torch.Generator().manual_seed(6)
    N, R, V = 8, 7, 10
    z0 = torch.randn(N, R, V, generator=g) * 2
    a = torch.randint(0, V, (N, R), generator=g)
    adv = torch.tensor([1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1.5, -1.5])[:, None].expand(N, R).clone()
    eta = 1e-3
    z1 = z0 + eta * adv[..., None] * (torch.nn.functional.one_hot(a, V).float() - torch.softmax(z0, -1))
    batch = SimpleNamespace(adv=adv, response=a, response_mask=torch.ones(N, R))
    out, _ = entropy_change_analysis(z0.double(), z1.double(), batch, 0.1)
    assert out["dH/corr_AS"] > 0.999
    assert out["dH/eta_eff"] == pytest.approx(eta, rel=0.02)
    assert out["dH/slope_lin"] == pytest.approx(1.0, rel=0.02)
    assert out["dH/quadrant_sign_agree"] == 1.0
    assert sum(out[f"quad_count/{q}"] for q in ("pos_high", "pos_low", "neg_high", "neg_low")) == pytest.approx(1.0)


def test_update_schedule_reaches_the_trainer_config():
    """mini_batches / ppo_epochs reach every method's GRPOConfig (defaults: one on-policy update)."""
    from compute.stare.config import METHODS, StareRunConfig

    for method in METHODS:
        g = StareRunConfig(method=method).method_grpo()
        assert (g.mini_batches, g.ppo_epochs) == (1, 1)
        g = StareRunConfig(method=method, mini_batches=4, ppo_epochs=2).method_grpo()
        assert (g.mini_batches, g.ppo_epochs) == (4, 2)

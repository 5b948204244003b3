"""Known-answer tests of the S2T mask, the baselines' masks and the renormalised loss (spec stapo §5)."""

from __future__ import annotations

import math

import pytest
import torch

from compute.core.rl.loss import policy_loss
from compute.stapo.mask import random_mask, s2t_mask, top_entropy_mask


def hand_batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Row 0: Â = +1, row 1: Â = −1, row 2: Â = +1 with a padded tail.  Probabilities and entropies by hand."""
    p = torch.tensor(
        [
            [0.001, 0.005, 0.5, 0.002, 0.9, 0.008],
            [0.001, 0.001, 0.9, 0.9, 0.9, 0.9],
            [0.004, 0.9, 0.006, 0.9, 0.001, 0.001],
        ]
    )
    H = torch.tensor(
        [
            [0.10, 0.20, 1.00, 0.30, 0.05, 0.90],
            [0.01, 0.02, 0.50, 0.50, 0.50, 0.50],
            [0.50, 0.40, 0.70, 0.30, 0.60, 0.01],
        ]
    )
    adv = torch.tensor([1.0, -1.0, 1.0])[:, None].expand(3, 6).clone()
    valid = torch.ones(3, 6)
    valid[2, 5] = 0  # padding: never a candidate
    return p.log(), H, adv, valid


def test_s2t_mask_hand_batch_quantile_and_exact_selection() -> None:
    logp, H, adv, valid = hand_batch()
    keep, st = s2t_mask(logp, H, adv, valid, tau_p=0.01, q=0.75)
    # candidates (Â > 0, p < 0.01, valid): row 0 t=0,1,3,5 (H .1 .2 .3 .9), row 2 t=0,2,4 (H .5 .7 .6)
    cand_h = torch.tensor([0.10, 0.20, 0.30, 0.90, 0.50, 0.70, 0.60], dtype=torch.float64)
    assert st["candidates"] == 7
    assert st["tau_h"] == pytest.approx(float(torch.quantile(cand_h, 0.75)), abs=1e-6)  # float32 inputs
    # numpy-style linear interpolation by hand: sorted .1 .2 .3 .5 .6 .7 .9, position 0.75·6 = 4.5 → (.6+.7)/2
    assert st["tau_h"] == pytest.approx(0.65, abs=1e-6)
    expected_silenced = {(0, 0), (0, 1), (0, 3), (2, 0), (2, 4)}
    got = {tuple(ij) for ij in (~keep).nonzero().tolist()}
    assert got == expected_silenced
    assert st["silenced"] == 5


def test_only_positive_advantage_tokens_are_masked() -> None:
    torch.manual_seed(0)
    logp = torch.log(torch.rand(64, 40) * 0.05)
    H = torch.rand(64, 40)
    adv = torch.randn(64)[:, None].expand(64, 40)
    valid = torch.ones(64, 40)
    keep, _ = s2t_mask(logp, H, adv, valid, tau_p=0.02, q=0.75)
    assert (~keep).any()
    assert bool((adv[~keep] > 0).all())


def test_nothing_masked_without_rare_tokens_or_candidates() -> None:
    logp, H, adv, valid = hand_batch()
    keep, st = s2t_mask(logp, H, adv, valid, tau_p=1e-4, q=0.75)  # no p < 1e-4
    assert bool(keep.all()) and st["candidates"] == 0 and math.isnan(st["tau_h"])
    keep, _ = s2t_mask(logp, H, -adv.abs(), valid, tau_p=0.5, q=0.75)  # no Â > 0
    assert bool(keep.all())


def test_inverted_entropy_silences_the_high_entropy_share() -> None:
    logp, H, adv, valid = hand_batch()
    keep, st = s2t_mask(logp, H, adv, valid, tau_p=0.01, q=0.75, invert=True)
    # quantile_0.25 of the 7 candidate entropies: position 1.5 → (.2 + .3)/2 = .25; silence H > .25
    assert st["tau_h"] == pytest.approx(0.25, abs=1e-6)
    assert {tuple(ij) for ij in (~keep).nonzero().tolist()} == {(0, 3), (0, 5), (2, 0), (2, 2), (2, 4)}


def test_top_entropy_mask_keeps_the_top_fifth() -> None:
    H = torch.arange(10, dtype=torch.float32)[None].repeat(2, 1)  # 20 tokens, 0..9 twice
    valid = torch.ones(2, 10)
    valid[1, 5:] = 0  # padding is "kept" (it is outside the response mask anyway)
    keep = top_entropy_mask(H, valid, 0.2)
    # 15 valid entropies 0,0,1,1,2,2,3,3,4,4,5,6,7,8,9; 0.8-quantile at position 11.2 → 6 + 0.2·1 = 6.2:
    # exactly 3 = 20 % of 15 tokens keep their gradient
    assert {tuple(ij) for ij in (keep & valid.bool()).nonzero().tolist()} == {(0, 7), (0, 8), (0, 9)}


def test_random_mask_silences_exactly_n_valid_tokens() -> None:
    valid = torch.zeros(4, 10)
    valid[:, :7] = 1
    keep = random_mask(valid, 9, torch.Generator().manual_seed(1))
    assert int((~keep).sum()) == 9 and bool(valid.bool()[~keep].all())


def _loss_parts(seed: int = 0) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    B, T = 6, 9
    old = -torch.rand(B, T, generator=g) * 5
    logp = (old + 0.3 * torch.randn(B, T, generator=g)).requires_grad_(True)
    adv = torch.randn(B, generator=g)[:, None].expand(B, T).contiguous()
    valid = (torch.rand(B, T, generator=g) < 0.85).float()
    H = torch.rand(B, T, generator=g)
    return logp, old, adv, valid, H


def test_stapo_loss_is_mean_over_unmasked_tokens_and_masked_tokens_get_zero_gradient() -> None:
    logp, old, adv, valid, H = _loss_parts()
    keep, st = s2t_mask(logp, H, adv, valid, tau_p=0.05, q=0.75)
    assert st["silenced"] > 0
    m = valid * keep.float()
    loss, _, per_tok = policy_loss(logp, old, adv, m, eps_low=0.2, eps_high=0.28)
    sel = m.bool()
    assert float(loss.detach()) == pytest.approx(float(per_tok[sel].mean()), rel=1e-6)
    loss.backward()
    assert logp.grad is not None
    assert bool((logp.grad[~keep] == 0).all())
    assert bool((logp.grad[sel] != 0).any())


def test_all_ones_mask_reproduces_the_justrl_loss() -> None:
    logp, old, adv, valid, _ = _loss_parts(1)
    ref, _, _ = policy_loss(logp, old, adv, valid, eps_low=0.2, eps_high=0.28)
    same, _, _ = policy_loss(logp, old, adv, valid * torch.ones_like(valid), eps_low=0.2, eps_high=0.28)
    assert float(same) == float(ref)


def test_no_renorm_differs_by_the_factor_sum_I_over_sum_mask() -> None:
    logp, old, adv, valid, H = _loss_parts(2)
    keep, _ = s2t_mask(logp, H, adv, valid, tau_p=0.05, q=0.75)
    stapo, _, _ = policy_loss(logp, old, adv, valid * keep.float(), eps_low=0.2, eps_high=0.28)
    norenorm, _, _ = policy_loss(logp, old, adv, valid, weights=keep.float(), eps_low=0.2, eps_high=0.28)
    factor = float((valid * keep.float()).sum() / valid.sum())
    assert factor < 1
    assert float(norenorm) == pytest.approx(factor * float(stapo), rel=1e-6)

"""Known answers of the gradient-norm lemma, its bounds, and the entropy lemma (spec stapo §2 "Supporting theory")."""

from __future__ import annotations

import math

import pytest
import torch

from compute.stapo.mask import entropy_change_first_order, grad_sq_bounds, logit_grad_sq


def test_logit_gradient_norm_closed_form_matches_autograd() -> None:
    g = torch.Generator().manual_seed(0)
    z = (torch.randn(200, 36, generator=g, dtype=torch.float64) * 3).requires_grad_(True)
    y = torch.randint(0, 36, (200,), generator=g)
    nll = -torch.log_softmax(z, -1).gather(-1, y[:, None]).sum()
    (grad,) = torch.autograd.grad(nll, z)
    got = (grad**2).sum(-1)
    want = logit_grad_sq(torch.softmax(z.detach(), -1), y)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=0)


def test_bounds_hold_on_random_distributions() -> None:
    g = torch.Generator().manual_seed(1)
    V = 36
    n = 10_000
    scale = 10 ** (torch.rand(n, 1, generator=g, dtype=torch.float64) * 3 - 1)  # peaked to flat
    pi = torch.softmax(torch.randn(n, V, generator=g, dtype=torch.float64) * scale, -1)
    y = torch.randint(0, V, (n,), generator=g)
    p = pi.gather(-1, y[:, None]).squeeze(-1)
    H = -(pi * pi.log()).sum(-1)
    val = logit_grad_sq(pi, y)
    lo, hi = grad_sq_bounds(p, H, V)
    assert bool((lo <= val + 1e-12).all())
    assert bool((val <= hi + 1e-12).all())


@pytest.mark.parametrize("V", [2, 36, 1000])
def test_bounds_are_tight_at_point_masses_and_uniform(V: int) -> None:
    uni = torch.full((V,), 1.0 / V, dtype=torch.float64)
    cases = [
        (torch.nn.functional.one_hot(torch.tensor(0), V).double(), 0),  # point mass on y: 0
        (torch.nn.functional.one_hot(torch.tensor(1), V).double(), 0),  # point mass elsewhere: 2
        (uni, 0),  # uniform: 1 − 1/V
    ]
    for pi, y in cases:
        yt = torch.tensor(y)
        val = float(logit_grad_sq(pi, yt))
        H = float(-(pi[pi > 0] * pi[pi > 0].log()).sum())
        lo, hi = grad_sq_bounds(pi[y], torch.tensor(H, dtype=torch.float64), V)
        assert float(lo) == pytest.approx(val, abs=1e-12)
        assert float(hi) == pytest.approx(val, abs=1e-12)
    assert float(logit_grad_sq(uni, torch.tensor(0))) == pytest.approx(1 - 1 / V, abs=1e-12)


def test_low_probability_low_entropy_tokens_have_the_largest_gradient() -> None:
    V = 36
    lo_rare, _ = grad_sq_bounds(torch.tensor(0.001), torch.tensor(0.1), V)
    _, hi_common = grad_sq_bounds(torch.tensor(0.5), torch.tensor(0.1), V)
    _, hi_flat = grad_sq_bounds(torch.tensor(0.001), torch.tensor(math.log(V)), V)
    assert float(lo_rare) > float(hi_common) and float(lo_rare) > float(hi_flat)


def _entropy(z: torch.Tensor) -> torch.Tensor:
    lp = torch.log_softmax(z, -1)
    return -(lp.exp() * lp).sum()


def test_entropy_lemma_matches_finite_differences() -> None:
    g = torch.Generator().manual_seed(3)
    eta = 1e-5
    for _ in range(20):
        z = torch.randn(12, generator=g, dtype=torch.float64) * 2
        A = torch.randn(12, generator=g, dtype=torch.float64)
        pi = torch.softmax(z, -1)
        z1 = z + eta * pi * (A - (pi * A).sum())  # expected policy-gradient step on the logits
        measured = float(_entropy(z1) - _entropy(z))
        pred = float(entropy_change_first_order(z, A, eta))
        assert measured == pytest.approx(pred, rel=1e-3)


def test_rare_token_in_correct_answer_raises_entropy() -> None:
    z = torch.tensor([4.0, 0.0, 0.0, -3.0], dtype=torch.float64)  # token 3 is rare
    A = torch.tensor([0.0, 0.0, 0.0, 1.0], dtype=torch.float64)  # only the rare token is rewarded
    assert float(entropy_change_first_order(z, A, 1.0)) > 0
    A = torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64)  # the dominant token is rewarded
    assert float(entropy_change_first_order(z, A, 1.0)) < 0

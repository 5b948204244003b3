"""The rescaling orbit and the canonicalizers: f(Sθ)=f(θ), J′=JS⁻¹, G′=S⁻¹GS⁻¹, c(Sθ)=c(θ)."""

from __future__ import annotations

import pytest
import torch

from compute.canonical_laplace.canonical import (
    canonical_d,
    canonical_scales,
    canonicalize,
    enorm_scales,
    input_normal_scales,
    output_normal_scales,
)
from compute.canonical_laplace.curvature import ggn_factor, hessian_nll, jacobian
from compute.canonical_laplace.model import DTYPE, MLP, init_params, neuron_to_param_scale, random_neuron_scales
from compute.canonical_laplace.tests.conftest import Net


def _rand_theta(mlp: MLP, seed: int = 0) -> torch.Tensor:
    return init_params(mlp, torch.Generator().manual_seed(seed)) * 2


def test_function_preserved(gen: torch.Generator) -> None:
    mlp = MLP((3, 7, 5, 4, 2))
    theta = _rand_theta(mlp)
    x = torch.randn(20, 3, generator=gen, dtype=DTYPE)
    f = mlp.forward(theta, x)
    for _ in range(3):
        s = neuron_to_param_scale(mlp, random_neuron_scales(mlp, 1.0, gen))
        assert torch.allclose(mlp.forward(s * theta, x), f, rtol=0, atol=1e-12)
        assert not torch.allclose(s * theta, theta)  # a genuinely different representative


def test_orbit_action_is_a_homomorphism(gen: torch.Generator) -> None:
    mlp = MLP((2, 4, 3, 1))
    a, b = random_neuron_scales(mlp, 1.0, gen), random_neuron_scales(mlp, 1.0, gen)
    prod = neuron_to_param_scale(mlp, [x * y for x, y in zip(a, b, strict=False)])
    assert torch.allclose(prod, neuron_to_param_scale(mlp, a) * neuron_to_param_scale(mlp, b), rtol=1e-14)


def test_jacobian_and_curvature_transformation_laws(reg_net: Net, cls_net: Net, gen: torch.Generator) -> None:
    for net in (reg_net, cls_net):
        mlp, theta, x, y = net.mlp, net.theta, net.data.train.x, net.data.train.y
        lik = net.data.likelihood
        s = neuron_to_param_scale(mlp, random_neuron_scales(mlp, 1.0, gen))
        j, j2 = jacobian(mlp, theta, x), jacobian(mlp, s * theta, x)
        assert torch.allclose(j2, j / s, rtol=1e-10, atol=1e-12)  # J′ = J S⁻¹
        f = mlp.forward(theta, x)
        b, b2 = ggn_factor(j, f, lik, 0.3), ggn_factor(j2, mlp.forward(s * theta, x), lik, 0.3)
        g, g2 = b.T @ b, b2.T @ b2
        scale = g.abs().max()
        assert ((g2 - g / (s[:, None] * s[None, :])).abs().max() / scale) < 1e-9  # G′ = S⁻¹GS⁻¹ (relative)
    # the Hessian transforms the same way
    mlp, theta, x, y = reg_net.mlp, reg_net.theta, reg_net.data.train.x, reg_net.data.train.y
    s = neuron_to_param_scale(mlp, random_neuron_scales(mlp, 0.5, gen))
    h, h2 = hessian_nll(mlp, theta, x, y, "regression", 0.3), hessian_nll(mlp, s * theta, x, y, "regression", 0.3)
    assert ((h2 - h / (s[:, None] * s[None, :])).abs().max() / h.abs().max()) < 1e-9


def test_classification_ggn_factor_matches_definition(cls_net: Net) -> None:
    mlp, theta, x = cls_net.mlp, cls_net.theta, cls_net.data.train.x
    j, f = jacobian(mlp, theta, x), mlp.forward(theta, x)
    p = torch.softmax(f, -1)
    lam = torch.diag_embed(p) - p[:, :, None] * p[:, None, :]
    g = torch.einsum("nkp,nkj,njq->pq", j, lam, j)  # Σ_n J_nᵀ(diag p_n − p_n p_nᵀ)J_n
    b = ggn_factor(j, f, "classification", 1.0)
    assert torch.allclose(b.T @ b, g, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("family,gamma", [("A", 0.0), ("A", 0.3), ("A", 0.5), ("A", 1.0), ("B", 0.5)])
def test_canonicalizer_is_orbit_invariant(family: str, gamma: float, gen: torch.Generator) -> None:
    mlp = MLP((3, 6, 5, 4, 2))
    theta = _rand_theta(mlp, 1)
    c = canonicalize(mlp, theta, family, gamma)
    d = canonical_d(mlp, theta, family, gamma)
    for _ in range(3):
        s = neuron_to_param_scale(mlp, random_neuron_scales(mlp, 1.0, gen))
        assert (canonicalize(mlp, s * theta, family, gamma) - c).abs().max() < 1e-12 * c.abs().max()
        assert torch.allclose(canonical_d(mlp, s * theta, family, gamma), d / s, rtol=1e-10)  # D(Sθ) = D(θ)S⁻¹


def test_normal_forms_are_what_they_claim() -> None:
    mlp = MLP((3, 6, 5, 2))
    theta = _rand_theta(mlp, 2)
    c0 = neuron_to_param_scale(mlp, input_normal_scales(mlp, theta)) * theta
    c1 = neuron_to_param_scale(mlp, output_normal_scales(mlp, theta)) * theta
    for li in range(len(mlp.hidden)):
        w, b = mlp.unflatten(c0)[li]
        assert torch.allclose((w**2).sum(1) + b**2, torch.ones(w.shape[0], dtype=DTYPE), rtol=1e-13)
        w_next = mlp.unflatten(c1)[li + 1][0]
        assert torch.allclose((w_next**2).sum(0), torch.ones(w_next.shape[1], dtype=DTYPE), rtol=1e-13)


@pytest.mark.parametrize("gamma", [0.0, 0.25, 0.5, 0.8, 1.0])
def test_one_hidden_layer_closed_form(gamma: float) -> None:
    """Family A, one hidden layer: ‖in_c‖ = r^γ and ‖out_c‖ = r^{1−γ}, r = ‖in‖·‖out‖."""
    mlp = MLP((2, 9, 3))
    theta = _rand_theta(mlp, 3)
    (w1, b1), (w2, _) = mlp.unflatten(theta)
    r = ((w1**2).sum(1) + b1**2).sqrt() * (w2**2).sum(0).sqrt()
    (cw1, cb1), (cw2, _) = mlp.unflatten(canonicalize(mlp, theta, "A", gamma))
    assert torch.allclose(((cw1**2).sum(1) + cb1**2).sqrt(), r**gamma, rtol=1e-13)
    assert torch.allclose((cw2**2).sum(0).sqrt(), r ** (1 - gamma), rtol=1e-13)


def test_enorm_balances_and_matches_family_a_at_half() -> None:
    mlp1 = MLP((2, 9, 3))
    theta = _rand_theta(mlp1, 4)
    assert torch.allclose(canonicalize(mlp1, theta, "B"), canonicalize(mlp1, theta, "A", 0.5), rtol=1e-10)
    # deeper: at the ENorm optimum every hidden neuron has ‖in‖ = ‖out‖ (ω ≡ 1 stationarity)
    mlp = MLP((3, 6, 5, 2))
    theta = _rand_theta(mlp, 5)
    ts, iters = enorm_scales(mlp, theta)
    c = neuron_to_param_scale(mlp, ts) * theta
    layers = mlp.unflatten(c)
    for li in range(len(mlp.hidden)):
        w, b = layers[li]
        assert torch.allclose((w**2).sum(1) + b**2, (layers[li + 1][0] ** 2).sum(0), rtol=1e-9)
    assert iters < 20000


def test_degenerate_neuron_keeps_invariance(gen: torch.Generator) -> None:
    mlp = MLP((2, 5, 4, 1))
    theta = _rand_theta(mlp, 6)
    (w1s, b1s), (w2s, _b2s), _ = mlp.layer_slices()
    theta[w1s].view(5, 2)[1] = 0.0  # neuron 1 of layer 1: zero incoming vector
    theta[b1s][1] = 0.0
    theta[w2s].view(4, 5)[:, 3] = 0.0  # neuron 3 of layer 1: zero outgoing column
    for family in ("A", "B"):
        for gamma in (0.0, 0.5, 1.0):
            c = canonicalize(mlp, theta, family, gamma)
            assert torch.isfinite(c).all()
            s = neuron_to_param_scale(mlp, random_neuron_scales(mlp, 1.0, gen))
            assert (canonicalize(mlp, s * theta, family, gamma) - c).abs().max() < 1e-12
            assert all(torch.isfinite(t).all() and (t > 0).all() for t in canonical_scales(mlp, theta, family, gamma))


def test_linear_model_has_identity_canonicalizer() -> None:
    mlp = MLP((4, 2))
    theta = _rand_theta(mlp, 7)
    for family in ("A", "B"):
        assert torch.equal(canonical_d(mlp, theta, family, 0.3), torch.ones_like(theta))

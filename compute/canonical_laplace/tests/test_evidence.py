"""Known answers for the evidence, the λ selection, the GLM predictive and orbit invariance."""

from __future__ import annotations

import math

import pytest
import torch

from compute.canonical_laplace.canonical import canonical_d
from compute.canonical_laplace.curvature import Curvature, ggn_factor, hessian_nll, jacobian, log_likelihood
from compute.canonical_laplace.evidence import (
    fit_standard_layerwise,
    fit_standard_scalar,
    fit_whitened,
    log_evidence_dense,
    log_evidence_eig,
    select_lambda,
)
from compute.canonical_laplace.model import DTYPE, MLP, neuron_to_param_scale, random_neuron_scales
from compute.canonical_laplace.tests.conftest import Net


def _state(net: Net, theta: torch.Tensor, curvature: str = "ggn") -> tuple[float, Curvature]:
    x, y, lik = net.data.train.x, net.data.train.y, net.data.likelihood
    f = net.mlp.forward(theta, x)
    ll = float(log_likelihood(f, y, lik, net.sigma))
    if curvature == "hessian":
        return ll, Curvature(dense=hessian_nll(net.mlp, theta, x, y, lik, net.sigma))
    return ll, Curvature(factor=ggn_factor(jacobian(net.mlp, theta, x), f, lik, net.sigma))


def test_bayesian_linear_regression_evidence_is_exact() -> None:
    """Linear model at its exact MAP θ(λ): Laplace log Z = log N(y; 0, σ²I + XXᵀ/λ) (to 1e-10)."""
    gen = torch.Generator().manual_seed(0)
    n, d, sigma = 40, 3, 0.4
    x = torch.randn(n, d, generator=gen, dtype=DTYPE)
    y = x @ torch.tensor([1.0, -2.0, 0.5], dtype=DTYPE) + 0.3 + sigma * torch.randn(n, generator=gen, dtype=DTYPE)
    mlp = MLP((d, 1))
    xa = torch.cat([x, torch.ones(n, 1, dtype=DTYPE)], 1)  # parameter order: W (1×d), then b
    for lam in (0.01, 0.7, 25.0):
        theta = torch.linalg.solve(xa.T @ xa / sigma**2 + lam * torch.eye(d + 1, dtype=DTYPE), xa.T @ y / sigma**2)
        f = mlp.forward(theta, x)
        ll = float(log_likelihood(f, y[:, None], "regression", sigma))
        curv = Curvature(factor=ggn_factor(jacobian(mlp, theta, x), f, "regression", sigma))
        fit = fit_standard_scalar(curv, theta, ll)
        log_z = fit_whitened("s", curv, theta, ll, torch.ones_like(theta), lam=lam).log_z
        cov = sigma**2 * torch.eye(n, dtype=DTYPE) + xa @ xa.T / lam
        exact = float(torch.distributions.MultivariateNormal(torch.zeros(n, dtype=DTYPE), cov).log_prob(y))
        assert abs(log_z - exact) < 1e-10 * abs(exact)
        assert fit.lam > 0
        # linear model: D = I, so canonical EB is standard EB
        can = fit_whitened("c", curv, theta, ll, canonical_d(mlp, theta, "A", 0.4))
        assert can.log_z == pytest.approx(fit.log_z, rel=1e-14) and can.lam == pytest.approx(fit.lam, rel=1e-14)
        # and for a linear model the Hessian equals the GGN
        h = hessian_nll(mlp, theta, x, y[:, None], "regression", sigma)
        assert torch.allclose(h, curv.matrix(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("curvature", ["ggn", "hessian"])
def test_eigenvalue_form_equals_slogdet_form(reg_net: Net, curvature: str) -> None:
    theta = reg_net.theta
    ll, curv = _state(reg_net, theta, curvature)
    g = Curvature(factor=curv.factor()).matrix()  # G clamped at 0 (GGN: unchanged)
    for lam in (1e-3, 0.3, 40.0):
        eig = curv.eigvals()
        dense = log_evidence_dense(ll, g, theta, torch.full_like(theta, lam))
        assert log_evidence_eig(ll, eig, float((theta**2).sum()), lam) == pytest.approx(dense, rel=1e-9)
    if curvature == "ggn":  # canonical prior field P₀ = λD²: whitened eigen form = slogdet form
        d = canonical_d(reg_net.mlp, theta, "A", 0.3)
        fit = fit_whitened("c", curv, theta, ll, d, lam=0.8)
        assert fit.log_z == pytest.approx(log_evidence_dense(ll, g, theta, 0.8 * d**2), rel=1e-10)


def test_mackay_fixed_point_is_a_stationary_point(reg_net: Net, cls_net: Net) -> None:
    for net in (reg_net, cls_net):
        theta = net.theta
        ll, curv = _state(net, theta)
        eig, sq = curv.eigvals(), float((theta**2).sum())
        lam = select_lambda(eig, sq)
        gamma_eff = float((eig / (eig + lam)).sum())
        assert lam == pytest.approx(gamma_eff / sq, rel=1e-12)  # λ = γ_eff/‖θ‖²
        h, t0 = 1e-5, math.log(lam)
        z = [log_evidence_eig(ll, eig, sq, math.exp(t)) for t in (t0 - 0.1, t0 - h, t0, t0 + h, t0 + 0.1)]
        assert abs((z[3] - z[1]) / (2 * h)) < 1e-6  # d log Z/d log λ = 0 (central difference)
        assert z[2] > z[0] and z[2] > z[4]  # a maximum


def test_layerwise_is_coordinatewise_optimal_and_beats_scalar(reg_net: Net) -> None:
    theta, mlp = reg_net.theta, reg_net.mlp
    ll, curv = _state(reg_net, theta)
    g = curv.matrix()
    scalar = fit_standard_scalar(curv, theta, ll)
    lw = fit_standard_layerwise(curv, theta, ll, mlp.groups(), scalar.lam)
    lams = lw.extra["lambdas"]

    def z(ls: list[float]) -> float:
        p0 = torch.cat(
            [torch.full((s.stop - s.start,), v, dtype=DTYPE) for s, v in zip(mlp.groups(), ls, strict=False)]
        )
        return log_evidence_dense(ll, g, theta, p0)

    assert lw.log_z == pytest.approx(z(lams), rel=1e-10)
    assert lw.log_z >= scalar.log_z - 1e-9  # layer-wise contains the scalar prior
    for i in range(len(lams)):
        up, dn = list(lams), list(lams)
        up[i] *= math.exp(1e-4)
        dn[i] *= math.exp(-1e-4)
        assert abs(z(up) - z(dn)) / 2e-4 < 1e-4  # ∂ log Z/∂ log λ_l = 0 at the fixed point


def test_glm_predictive_matches_dense_solve(reg_net: Net) -> None:
    theta, mlp = reg_net.theta, reg_net.mlp
    ll, curv = _state(reg_net, theta)
    xs = torch.linspace(-2, 10, 7, dtype=DTYPE)[:, None]
    js = jacobian(mlp, theta, xs)[:, 0, :]
    for d in (torch.ones_like(theta), canonical_d(mlp, theta, "A", 0.5)):
        fit = fit_whitened("x", curv, theta, ll, d)
        a = curv.matrix() + torch.diag(fit.prior_precision)
        dense = (js * torch.linalg.solve(a, js.T).T).sum(1)
        assert torch.allclose(fit.latent_cov(js[:, None, :])[:, 0, 0], dense, rtol=1e-8)


@pytest.mark.parametrize(
    "which,curvature,family", [("reg", "ggn", "A"), ("cls", "ggn", "A"), ("reg", "hessian", "A"), ("reg", "ggn", "B")]
)
def test_canonical_evidence_and_predictive_invariant_standard_not(
    reg_net: Net, cls_net: Net, which: str, curvature: str, family: str
) -> None:
    """Across the orbit: canonical log Z, λ*, latent variance agree to 1e-8 (relative); standard's do not."""
    net = reg_net if which == "reg" else cls_net
    mlp = net.mlp
    gen = torch.Generator().manual_seed(5)
    xs = net.data.test_out.x[:10]
    out = {"can": [], "std": []}
    for r in range(3):
        theta = net.theta if r == 0 else neuron_to_param_scale(mlp, random_neuron_scales(mlp, 1.0, gen)) * net.theta
        ll, curv = _state(net, theta, curvature)
        js = jacobian(mlp, theta, xs)
        for key, d in (("std", torch.ones_like(theta)), ("can", canonical_d(mlp, theta, family, 0.3))):
            fit = fit_whitened(key, curv, theta, ll, d)
            out[key].append((fit.log_z, fit.lam, torch.diagonal(fit.latent_cov(js), dim1=-2, dim2=-1)))
    z0, l0, v0 = out["can"][0]
    for z, lam, v in out["can"][1:]:
        assert abs(z - z0) <= 1e-8 * abs(z0)
        assert abs(lam - l0) <= 1e-8 * l0
        assert ((v - v0).abs() / v0).max() <= 1e-8
    spread = max(z for z, _, _ in out["std"]) - min(z for z, _, _ in out["std"])
    assert spread > 0.1  # standard EB visibly changes across functionally identical networks

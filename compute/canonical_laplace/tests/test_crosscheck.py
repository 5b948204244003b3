"""laplace-torch 0.3 (the reference library) agrees with the native float64 implementation.

Skipped when laplace-torch is not installed (it is an optional cross-check, see docs/papers/canonical_laplace.md).
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from compute.canonical_laplace.canonical import canonical_d
from compute.canonical_laplace.curvature import Curvature, ggn_factor, jacobian, log_likelihood
from compute.canonical_laplace.evidence import fit_whitened, probit_probs
from compute.canonical_laplace.tests.conftest import Net

laplace = pytest.importorskip("laplace")
curvlinops = pytest.importorskip("laplace.curvature")


@pytest.mark.parametrize("which", ["reg", "cls"])
def test_laplace_torch_log_marglik_and_glm_variance(reg_net: Net, cls_net: Net, which: str) -> None:
    net = reg_net if which == "reg" else cls_net
    mlp, theta, x, y = net.mlp, net.theta, net.data.train.x, net.data.train.y
    lik = net.data.likelihood
    f = mlp.forward(theta, x)
    ll = float(log_likelihood(f, y, lik, net.sigma))
    curv = Curvature(factor=ggn_factor(jacobian(mlp, theta, x), f, lik, net.sigma))
    fit = fit_whitened("canonical", curv, theta, ll, canonical_d(mlp, theta, "A", 0.5))
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        la = laplace.Laplace(
            mlp.torch_module(theta),
            lik,
            subset_of_weights="all",
            hessian_structure="full",
            sigma_noise=net.sigma if lik == "regression" else 1.0,
            prior_precision=fit.prior_precision,  # per-parameter λD², parameters_to_vector order
            backend=curvlinops.CurvlinopsGGN,
        )
        la.fit(DataLoader(TensorDataset(x, y), batch_size=len(x)))
        lml = float(la.log_marginal_likelihood())
        xs = net.data.test_out.x[:8]
        if lik == "regression":
            _, lt_var = la(xs, pred_type="glm")  # laplace-torch's own Jacobians and GLM variance
            lt_var = lt_var.reshape(-1)
        else:
            lt_probs = la(xs, pred_type="glm", link_approx="probit")
    finally:
        torch.set_default_dtype(old)
    assert lml == pytest.approx(fit.log_z, rel=1e-5)
    cov = fit.latent_cov(jacobian(mlp, theta, xs))
    if lik == "regression":
        assert ((lt_var - cov[:, 0, 0]).abs() / cov[:, 0, 0]).max() < 1e-5
    else:
        ours = probit_probs(mlp.forward(theta, xs), cov)
        assert (lt_probs - ours).abs().max() < 1e-6

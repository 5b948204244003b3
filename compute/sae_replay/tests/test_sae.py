"""Known answers for the SAE core: exact sparsity, the JumpReLU pseudo-gradient, the decoder constraint."""

from __future__ import annotations

import pytest
import torch

from compute.sae_replay.metrics import explained_variance, reconstruction
from compute.sae_replay.replay import TrainSpec, train_sae
from compute.sae_replay.sae import SAE, lr_at, rectangle, step


def _x(n: int = 64, d: int = 16, seed: int = 0) -> torch.Tensor:
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed))


def test_topk_has_exactly_k_nonzeros_per_row() -> None:
    sae = SAE(16, 64, "topk", k=5, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        sae.b_enc.fill_(10.0)  # every pre-activation positive: TopK must still keep exactly k
    _, f = sae(_x())
    assert ((f != 0).sum(1) == 5).all()


def test_batchtopk_keeps_exactly_k_times_batch_and_threshold_matches_l0() -> None:
    torch.manual_seed(0)
    x = _x(512, 16, 1)
    spec = TrainSpec(d=16, m=64, arch="batchtopk", k=4, batch=128, lr=5e-3)
    sae = SAE(16, 64, "batchtopk", k=4, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        sae.b_enc.fill_(1.0)
    f = sae.activate(sae.pre(x[:128]), training=True)
    assert int((f != 0).sum()) == 4 * 128  # exactly k·B per batch
    # after training, the EMA threshold gives mean L0 within 10 % of k on held-out data
    pos = [0]

    def nb(n: int) -> torch.Tensor:
        pos[0] += 1
        return _x(n, 16, 100 + pos[0])

    sae, _ = train_sae(spec, nb, 128 * 120, torch.zeros(16))
    l0 = reconstruction(sae, _x(4096, 16, 7))["l0"]
    assert abs(l0 - 4) <= 0.4


def test_jumprelu_theta_gradient_is_the_rectangle_kernel_formula() -> None:
    eps = 0.1
    theta = torch.tensor([0.5, 1.0], requires_grad=True)
    p = torch.tensor([[0.52, 0.2], [0.46, 1.04], [0.9, 0.96], [0.56, 1.2]])
    # H(p − θ): ∂/∂θ_i of Σ_rows H = −(1/ε)·#{rows: |p_i − θ_i| < ε/2}
    step(p, theta, eps).sum().backward()
    expected = -(1 / eps) * rectangle((p - theta.detach()) / eps).sum(0)
    assert torch.allclose(theta.grad, expected)
    assert torch.allclose(theta.grad, torch.tensor([-20.0, -20.0]))  # rows 0,1 for θ₁; rows 1,2 for θ₂
    # JumpReLU output: ∂/∂θ = −(θ/ε)·K, ∂/∂p = H(p − θ)
    theta.grad = None
    pp = p.clone().requires_grad_(True)
    sae = SAE(2, 2, "jumprelu", jump_eps=eps)
    with torch.no_grad():
        sae.theta.copy_(theta)
    sae.activate(pp).sum().backward()
    assert torch.allclose(sae.theta.grad, -(theta.detach() / eps) * rectangle((p - theta.detach()) / eps).sum(0))
    assert torch.equal(pp.grad, (p > theta.detach()).float())


def test_jumprelu_l0_decreases_with_lambda() -> None:
    x = _x(1024, 16, 3)
    l0s = []
    for lam in (1e-3, 3e-2, 3e-1):
        torch.manual_seed(0)
        spec = TrainSpec(d=16, m=64, arch="jumprelu", batch=256, lr=5e-3, l0_coeff=lam, jump_eps=0.05, theta_init=0.05)
        pos = [0]

        def nb(n: int, pos: list[int] = pos) -> torch.Tensor:
            pos[0] += 1
            return _x(n, 16, 200 + pos[0])

        sae, _ = train_sae(spec, nb, 256 * 80, torch.zeros(16))
        l0s.append(reconstruction(sae, x)["l0"])
    assert l0s[0] > l0s[1] > l0s[2]


def test_decoder_columns_unit_norm_and_gradient_orthogonal() -> None:
    sae = SAE(16, 64, "topk", k=4, generator=torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(sae.parameters(), lr=1e-2)
    for s in range(5):
        loss, _, _ = sae.loss(_x(128, 16, s))
        opt.zero_grad()
        loss.backward()
        sae.project_decoder_grad()
        # before the step: every column's gradient is orthogonal to the column
        dots = (sae.W_dec.grad * sae.W_dec).sum(0)
        assert dots.abs().max() < 1e-6
        opt.step()
        sae.normalize_decoder()
        assert torch.allclose(sae.W_dec.norm(dim=0), torch.ones(64), atol=1e-6)


def test_ev_is_one_for_perfect_reconstruction_and_zero_for_the_mean() -> None:
    x = _x(100, 8)
    assert explained_variance(x, x) == pytest.approx(1.0, abs=1e-12)
    assert explained_variance(x, x.mean(0, keepdim=True).expand_as(x)) == pytest.approx(0.0, abs=1e-12)


def test_lr_schedule_warmup_and_decay() -> None:
    n = 1000
    assert lr_at(0, n, 1.0) == pytest.approx(0.1)  # warm-up over 10 steps (1 %)
    assert lr_at(500, n, 1.0) == 1.0
    assert lr_at(900, n, 1.0) == pytest.approx(0.5)  # halfway through the last 20 %
    assert lr_at(999, n, 1.0) == pytest.approx(0.005)

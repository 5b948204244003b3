"""Policies: attention block, padding invariance, permutation equivariance, recurrence bookkeeping, probe."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from compute.modular_control.envs import BatchEnv
from compute.modular_control.models import MHA, ModelConfig, Policy, padding_bias
from compute.modular_control.morph import CTX_DIM, OBS_DIM, visible_mask
from compute.modular_control.ppo import PPOConfig, Rollout, chunk_batches, gaussian_logp
from compute.modular_control.probe import ridge_r2

torch.set_num_threads(1)


def _inputs(L: int = 2, B: int = 3, N: int = 9, valid: int = 5, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    obs = torch.randn(L, B, N, OBS_DIM, generator=g)
    ctx = torch.randn(L, B, N, CTX_DIM, generator=g)
    prev_a = torch.randn(L, B, N, generator=g)
    mask = torch.zeros(L, B, N, dtype=torch.bool)
    mask[..., :valid] = True
    reset = torch.zeros(L, B, dtype=torch.bool)
    return obs, ctx, prev_a, mask, reset


def _policy(arch: str, **kw) -> Policy:
    torch.manual_seed(0)
    return Policy(ModelConfig(arch=arch, **kw), visible_mask()).eval()


def test_sdpa_block_equals_multihead_attention() -> None:
    torch.manual_seed(0)
    d, h = 64, 2
    mine, ref = MHA(d, h), nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(mine.qkv.weight)
        ref.in_proj_bias.copy_(mine.qkv.bias)
        ref.out_proj.weight.copy_(mine.out.weight)
        ref.out_proj.bias.copy_(mine.out.bias)
    x = torch.randn(4, 9, d)
    mask = torch.ones(4, 9, dtype=torch.bool)
    mask[:, 6:] = False
    mask[1, 3:] = False
    y = mine(x, padding_bias(mask))
    y_ref, _ = ref(x, x, x, key_padding_mask=~mask, need_weights=False)
    assert (y - y_ref).abs().max() < 1e-6


@pytest.mark.parametrize("arch", ["mlp", "metamorph", "amorpheus", "modumorph", "modrec"])
def test_padding_is_invisible(arch: str) -> None:
    """Garbage in masked padding limbs changes no valid output (1e-6)."""
    pol = _policy(arch)
    obs, ctx, prev_a, mask, reset = _inputs()
    h0 = pol.initial_state(3)
    mu0, v0, _, _ = pol(obs, ctx, prev_a, mask, h0, reset)
    g = torch.Generator().manual_seed(5)
    obs2, ctx2, pa2 = obs.clone(), ctx.clone(), prev_a.clone()
    obs2[..., 5:, :] = 100 * torch.randn(obs2[..., 5:, :].shape, generator=g)
    ctx2[..., 5:, :] = 100 * torch.randn(ctx2[..., 5:, :].shape, generator=g)
    pa2[..., 5:] = 7.0
    mu1, v1, _, _ = pol(obs2, ctx2, pa2, mask, h0, reset)
    assert (mu1[..., :5] - mu0[..., :5]).abs().max() < 1e-6
    assert (v1 - v0).abs().max() < 1e-6


@pytest.mark.parametrize("arch", ["amorpheus", "modumorph", "modrec"])
def test_permutation_equivariance_without_position_embedding(arch: str) -> None:
    pol = _policy(arch)
    obs, ctx, prev_a, mask, reset = _inputs()
    perm = torch.tensor([3, 0, 4, 1, 2, 5, 6, 7, 8])
    h0 = pol.initial_state(3)
    mu, v, _, _ = pol(obs, ctx, prev_a, mask, h0, reset)
    mu_p, v_p, _, _ = pol(obs[:, :, perm], ctx[:, :, perm], prev_a[:, :, perm], mask[:, :, perm], h0, reset)
    assert torch.allclose(mu_p, mu[:, :, perm], rtol=1e-5, atol=1e-5)  # ModuMorph's μ are O(100) here
    assert torch.allclose(v_p, v, rtol=1e-5, atol=1e-5)


def test_metamorph_position_embedding_breaks_equivariance() -> None:
    """Known negative: MetaMorph's learned DFS position embedding makes the output order-dependent."""
    pol = _policy("metamorph")
    with torch.no_grad():
        pol.pos.normal_()
    obs, ctx, prev_a, mask, reset = _inputs()
    perm = torch.tensor([3, 0, 4, 1, 2, 5, 6, 7, 8])
    mu, *_ = pol(obs, ctx, prev_a, mask, pol.initial_state(3), reset)
    mu_p, *_ = pol(obs[:, :, perm], ctx[:, :, perm], prev_a[:, :, perm], mask[:, :, perm], pol.initial_state(3), reset)
    assert (mu_p - mu[:, :, perm]).abs().max() > 1e-3


@pytest.mark.parametrize("order", ["rnn_then_attn", "attn_then_rnn"])
def test_state_resets_at_episode_start(order: str) -> None:
    """A reset at step t gives the same output as starting fresh at step t from the zero state."""
    pol = _policy("modrec", order=order)
    obs, ctx, prev_a, mask, reset = _inputs(L=4)
    reset[2, 1] = True
    h0 = torch.randn(3, 9, 64)
    mu, _, _, feats = pol(obs, ctx, prev_a, mask, h0, reset)
    mu_fresh, _, _, _ = pol(
        obs[2:, 1:2], ctx[2:, 1:2], prev_a[2:, 1:2], mask[2:, 1:2], torch.zeros(1, 9, 64), reset[2:, 1:2]
    )
    assert (mu[2:, 1] - mu_fresh[:, 0]).abs().max() < 1e-6
    mu_nr, *_ = pol(obs, ctx, prev_a, mask, h0, torch.zeros_like(reset))
    assert (mu_nr[2:, 1] - mu[2:, 1]).abs().max() > 1e-4  # without the reset the old state leaks in


def test_hidden_context_never_reaches_the_policy() -> None:
    """c⁻ fields (damping, friction, armature) are zeroed before any layer: changing them changes nothing."""
    pol = _policy("modrec")
    obs, ctx, prev_a, mask, reset = _inputs()
    ctx2 = ctx.clone()
    ctx2[..., -3:] += 5.0  # the three hidden fields are last in CONTEXT_FIELDS
    a = pol(obs, ctx, prev_a, mask, pol.initial_state(3), reset)[0]
    b = pol(obs, ctx2, prev_a, mask, pol.initial_state(3), reset)[0]
    assert (a - b).abs().max() == 0.0


@pytest.mark.parametrize("bptt", [16, 32])
def test_chunked_replay_reproduces_rollout(bptt: int) -> None:
    """Replaying stored chunk-start states (with in-chunk resets) gives the rollout's log-probs and values:
    BPTT over 16-step chunks equals one chunk spanning the whole rollout (ratio = 1 before any update)."""
    torch.manual_seed(0)
    pol = Policy(ModelConfig(arch="modrec", d=32, layers=1), visible_mask()).eval()
    env = BatchEnv(["hopper_3", "walker_2_main"], n_slots=2, seed=0, episode_len=7)
    cfg = PPOConfig(steps_per_iter=32, bptt=bptt)
    data = Rollout(env, pol, 2, cfg, seed=0).collect()
    assert data["reset"][1:].any()  # episodes end inside the rollout
    ch = chunk_batches(data, bptt)
    with torch.no_grad():
        mu, v, _, _ = pol(ch["obs"], ch["ctx"], ch["prev_a"], ch["mask"], ch["h_starts"], ch["reset"])
        logp = gaussian_logp(ch["action"], mu, pol.log_std, ch["act_mask"].float())
    assert (logp - ch["logp"]).abs().max() < 1e-4
    assert (v - ch["value"]).abs().max() < 1e-5


def test_ridge_probe_known_answers() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 8))
    y = x @ rng.normal(size=8) + 0.5
    assert ridge_r2(x[:200], y[:200], x[200:], y[200:], alpha=1e-6) > 0.999
    noise = rng.normal(size=400)
    assert ridge_r2(x[:200], noise[:200], x[200:], noise[200:], alpha=1.0) < 0.05

"""Known-answer tests of the sampler, the masked refinement, attention capture, masks, NFE counting and data."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from compute.lotts.data import DEFECTS, SEQ_LEN, Attributes, add_defect, render, sample_batch
from compute.lotts.diffusion import Sampler, alphas_cumprod, ddim_timesteps, q_sample
from compute.lotts.experiments import nfe_at_quality
from compute.lotts.localize import auroc, capture_maps, iou, localize, prompt_ids, score_map, top_r_mask
from compute.lotts.model import CountingUNet, TinyUNet, UNetConfig
from compute.lotts.search import sample_candidates
from compute.lotts.verifiers import SelectNet, template_residual

torch.set_num_threads(1)  # one thread, as the lab runner does (the machine is shared)

S = 16


@pytest.fixture(scope="module")
def net() -> CountingUNet:
    torch.manual_seed(0)
    return CountingUNet(TinyUNet(UNetConfig(size=S, channels=(8, 16, 16), ctx_dim=32))).eval()


def _batch(n: int = 3, seed: int = 0) -> tuple[torch.Tensor, list[Attributes]]:
    rng = np.random.default_rng(seed)
    attrs = [Attributes(i % 4, i % 6, (2 * i) % 9) for i in range(n)]
    return torch.as_tensor(np.stack([render(a, S, rng) for a in attrs])), attrs


def _uncond(n: int) -> torch.Tensor:
    return prompt_ids([None] * n, None)  # type: ignore[list-item]


def test_ddim_is_deterministic_for_fixed_noise(net: CountingUNet) -> None:
    sampler = Sampler(net, steps=5, cfg_scale=3.0)
    _, attrs = _batch()
    noise = torch.randn(3, 3, S, S, generator=torch.Generator().manual_seed(1))
    a = sampler.sample(noise, prompt_ids(attrs, "high"), _uncond(3))
    b = sampler.sample(noise.clone(), prompt_ids(attrs, "high"), _uncond(3))
    assert torch.equal(a, b)
    assert ddim_timesteps(20) == list(range(950, -1, -50))


def test_refine_with_empty_mask_returns_x0(net: CountingUNet) -> None:
    sampler = Sampler(net, steps=10)
    x0, attrs = _batch()
    eps = torch.randn_like(x0)
    out = sampler.refine(x0, torch.zeros(3, 1, S, S), prompt_ids(attrs, "high"), _uncond(3), 500, 0, eps)
    torch.testing.assert_close(out, x0, atol=1e-5, rtol=0)


def test_refine_with_full_mask_is_an_sdedit_restart(net: CountingUNet) -> None:
    sampler = Sampler(net, steps=10)
    x0, attrs = _batch()
    ids, un = prompt_ids(attrs, "high"), _uncond(3)
    eps = torch.randn_like(x0)
    out = sampler.refine(x0, torch.ones(3, 1, S, S), ids, un, 500, 0, eps)
    ts = sampler.restart_timesteps(500)
    assert ts[0] == 500 and ts[-1] == 0
    x = q_sample(x0, ts[0], eps, alphas_cumprod())
    for t in ts:
        x = sampler.step(x, t, sampler.prev(t), sampler.eps(x, t, ids, un))
    torch.testing.assert_close(out, x, atol=1e-6, rtol=0)


def test_masked_refinement_keeps_unmasked_pixels_and_holistic_changes_them_a_little(net: CountingUNet) -> None:
    sampler = Sampler(net, steps=10)
    x0, attrs = _batch()
    mask = (torch.rand(3, 1, S, S, generator=torch.Generator().manual_seed(2)) < 0.3).float()
    eps, eps_h = torch.randn_like(x0), torch.randn_like(x0)
    out, pre = sampler.refine(
        x0, mask, prompt_ids(attrs, "high"), _uncond(3), 500, 2, eps, eps_h, return_pre_holistic=True
    )
    outside = (mask == 0).expand_as(x0)
    assert torch.equal(pre[outside], x0[outside])  # before the holistic steps: bit-identical
    assert not torch.allclose(pre[~outside], x0[~outside])  # inside: regenerated
    assert (out - pre).abs().max() > 0  # the holistic steps do touch the whole image


def test_attention_maps_are_row_stochastic_with_expected_shapes(net: CountingUNet) -> None:
    x0, attrs = _batch()
    per = capture_maps(net, x0, attrs, (0.4, 0.6), "all", torch.Generator().manual_seed(0), per_step=True)
    assert {k[0] for k in per} == {400, 600}
    for (_, layer), (pos, neg) in per.items():
        P = (S // 2) ** 2 if layer != "mid_4" else (S // 4) ** 2
        for m in (pos, neg):
            assert m.sa.shape == (3, P, P) and m.ca.shape == (3, P, SEQ_LEN)
            torch.testing.assert_close(m.sa.sum(-1), torch.ones(3, P), atol=1e-5, rtol=0)
            torch.testing.assert_close(m.ca.sum(-1), torch.ones(3, P), atol=1e-5, rtol=0)


@pytest.mark.parametrize("r", [0.05, 0.2, 0.5])
def test_top_r_mask_density(r: float) -> None:
    P = torch.rand(4, 64, generator=torch.Generator().manual_seed(0))
    m = top_r_mask(P, r, S)
    assert m.shape == (4, 1, S, S)
    k = max(1, round(r * 64))
    torch.testing.assert_close(m.mean((1, 2, 3)), torch.full((4,), k / 64))
    # the selected cells are exactly the k largest
    top = P.argsort(1, descending=True)[:, :k]
    cells = torch.nn.functional.avg_pool2d(m, 2).view(4, 64)
    assert torch.equal(torch.sort(top, 1).values, torch.sort(cells.argsort(1, descending=True)[:, :k], 1).values)


def test_nfe_counting_best_of_n_and_localization(net: CountingUNet) -> None:
    steps, N = 5, 3
    sampler = Sampler(net, steps=steps, cfg_scale=3.0)
    _, attrs = _batch(2)
    net.nfe = 0
    X, _, per = sample_candidates(sampler, attrs, N, 0, SelectNet())
    assert net.nfe == 2 * N * steps * len(attrs) and per == 2 * steps
    before = net.nfe
    localize(net, X[:, 0], attrs, 0.2, 0.3, (0.4, 0.6), torch.Generator().manual_seed(0))
    assert net.nfe - before == 2 * 2 * len(attrs)  # 2 prompts × n_t = 2 conditional passes, per image
    assert Sampler(net, steps=4, cfg_scale=1.0).cfg_factor == 1


def test_score_map_ablations_and_contrast_sign() -> None:
    """A hand-built case: the low-quality token draws attention to cell 5 only under the negative prompt."""
    from compute.lotts.localize import Maps

    B, P = 1, 16
    eye = torch.eye(P)[None]
    ca_pos = torch.full((B, P, SEQ_LEN), 1.0 / SEQ_LEN)
    ca_neg = ca_pos.clone()
    ca_neg[0, 5, 5] += 0.5
    ca_neg = ca_neg / ca_neg.sum(-1, keepdim=True)
    Pm = score_map(Maps(eye, ca_pos), Maps(eye, ca_neg), lam=0.0)
    assert int(Pm.argmax()) == 5
    assert Pm[0, 5] > 0 and (Pm[0, torch.arange(P) != 5] < 0).all()  # contrast removes the common part
    # propagation with a uniform self-attention spreads everything evenly
    flat = score_map(Maps(torch.full((B, P, P), 1 / P), ca_pos), Maps(torch.full((B, P, P), 1 / P), ca_neg), lam=0.0)
    torch.testing.assert_close(flat, torch.zeros_like(flat), atol=1e-7, rtol=0)


def test_auroc_and_iou_known_values() -> None:
    y = np.array([0, 0, 1, 1])
    assert auroc(np.array([0.1, 0.2, 0.8, 0.9]), y) == 1.0
    assert auroc(np.array([0.9, 0.8, 0.2, 0.1]), y) == 0.0
    assert auroc(np.ones(4), y) == 0.5
    assert auroc(np.array([0.1, 0.5, 0.5, 0.9]), y) == 0.875  # one tie counts half
    assert iou(np.array([1, 1, 0, 0]), np.array([1, 0, 1, 0])) == pytest.approx(1 / 3)


@pytest.mark.parametrize("kind", DEFECTS)
def test_defect_mask_is_exactly_the_changed_pixels(kind: str) -> None:
    rng = np.random.default_rng(0)
    for i in range(20):
        img = render(Attributes(i % 4, i % 6, i % 9), S, rng)
        out, m = add_defect(img, kind, rng)
        changed = (out != img).any(0)
        assert np.array_equal(changed, m)
        assert m.sum() >= 1 and m.mean() < 0.25  # local: at most a quarter of the image
        ys, xs = np.nonzero(m)
        assert np.ptp(ys) <= S // 2 and np.ptp(xs) <= S // 2


def test_training_batch_quality_tokens_follow_defects() -> None:
    b = sample_batch(200, S, np.random.default_rng(0), p_def=0.4)
    assert 0.3 < b.defective.mean() < 0.5
    assert not b.masks[~b.defective].any() and b.masks[b.defective].any((1, 2)).all()


def test_template_residual_is_zero_on_the_template_and_large_on_another_caption() -> None:
    a = Attributes(0, 0, 4)
    x = torch.as_tensor(render(a, S, None, jitter=False))[None]
    assert float(template_residual(x, [a])[0]) == pytest.approx(0.0, abs=1e-7)
    assert float(template_residual(x, [Attributes(1, 2, 0)])[0]) > 0.1


def test_nfe_at_quality_interpolates_in_log_nfe() -> None:
    assert nfe_at_quality([10, 100], np.array([0.0, 1.0]), 0.5) == pytest.approx(np.sqrt(1000))
    assert nfe_at_quality([10, 100], np.array([0.0, 1.0]), 2.0) is None
    assert nfe_at_quality([10, 100], np.array([0.0, 1.0]), -1.0) == 10

"""The plug-in inside the core trainer: the STAPO loss is the clipped loss averaged over unsilenced tokens,
JustRL averages over all, no-renorm is exactly Σ I / Σ mask times STAPO (spec stapo §5 "Renormalisation")."""

from __future__ import annotations

import pytest
import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.lm.sampling import logp_entropy
from compute.core.rl.trainer import GRPOConfig, GRPOTrainer
from compute.core.tasks.arithmetic import Arithmetic
from compute.stapo.mask import s2t_mask
from compute.stapo.plugin import StapoPlugin


def _setup(arm: str, seed: int = 0):  # type: ignore[no-untyped-def]
    torch.manual_seed(seed)
    task = Arithmetic(1, 1)
    model = TinyLM(LMConfig.sized("micro", task.tokenizer.vocab_size, max_len=48))
    cfg = GRPOConfig(
        prompts_per_step=3, group_size=4, max_new=10, eval_every=0, n_eval=4, record_every=0, eps_high=0.28, seed=seed
    )
    plugin = StapoPlugin(arm, tau_p=0.2, q=0.75, grad_every=1)
    tr = GRPOTrainer(model, task, cfg, [plugin])
    batch, _ = tr.collect()
    g = torch.Generator().manual_seed(5)
    sign = torch.where(torch.rand(len(batch), generator=g) < 0.5, -1.0, 1.0)
    batch.adv = sign[:, None] * batch.response_mask  # both signs, so positive-advantage candidates exist
    tr.recompute_old(batch)
    return tr, batch, plugin


@pytest.fixture(scope="module")
def manual():  # type: ignore[no-untyped-def]
    tr, batch, _ = _setup("stapo")
    with torch.no_grad():
        lp, ent = logp_entropy(tr.model, batch.prompt, batch.prompt_mask, batch.response)
        keep, st = s2t_mask(lp, ent, batch.adv, batch.response_mask, 0.2, 0.75)
    return batch, keep, st


def test_stapo_loss_is_the_mean_over_unsilenced_tokens(manual) -> None:  # type: ignore[no-untyped-def]
    batch, keep, st = manual
    assert st["silenced"] > 0
    tr, b, plugin = _setup("stapo")
    loss, _ = tr.minibatch_loss(b)
    valid = b.response_mask.bool()
    # on-policy first update: ρ = 1, so ℓ = −Â per token
    want = (-b.adv)[valid & keep].mean()
    assert float(loss) == pytest.approx(float(want), rel=1e-5)
    out = plugin.on_step_end({}, tr.state)
    assert out["s2t/mask_rate"] == pytest.approx(st["silenced"] / float(valid.sum()))


def test_justrl_and_no_renorm(manual) -> None:  # type: ignore[no-untyped-def]
    batch, keep, _ = manual
    valid = batch.response_mask.bool()
    tr, b, _ = _setup("justrl")
    loss_j, _ = tr.minibatch_loss(b)
    assert float(loss_j) == pytest.approx(float((-b.adv)[valid].mean()), rel=1e-5)
    tr, b, _ = _setup("no_renorm")
    loss_n, _ = tr.minibatch_loss(b)
    tr, b, _ = _setup("stapo")
    loss_s, _ = tr.minibatch_loss(b)
    factor = float((valid & keep).sum()) / float(valid.sum())
    assert float(loss_n) == pytest.approx(factor * float(loss_s), rel=1e-5)


def test_masked_tokens_get_no_parameter_gradient_contribution(manual) -> None:  # type: ignore[no-untyped-def]
    """Gradients of the STAPO loss equal those of an explicit loss over the kept tokens only."""
    _, keep, _ = manual
    tr, b, _ = _setup("stapo")
    tr.model.zero_grad()
    loss, _ = tr.minibatch_loss(b, backward=True)
    g1 = [p.grad.clone() for p in tr.model.parameters() if p.grad is not None]
    tr.model.zero_grad()
    lp, _ = logp_entropy(tr.model, b.prompt, b.prompt_mask, b.response)
    sel = b.response_mask.bool() & keep
    explicit = (-b.adv * torch.exp(lp - b.old_logp))[sel].mean()
    explicit.backward()
    g2 = [p.grad.clone() for p in tr.model.parameters() if p.grad is not None]
    for a, c in zip(g1, g2, strict=True):
        torch.testing.assert_close(a, c, rtol=1e-4, atol=1e-7)

"""Known answers for the GRPO core: group advantages, overlong shaping, pass@k, the clipped loss and its
aggregation, masks, plug-in chaining and neutrality, micro-batching, the SFT cache."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from compute.core.rl import (
    GRPOConfig,
    GRPOTrainer,
    LossContext,
    Plugin,
    PluginChain,
    RolloutSpec,
    TokenWeights,
    group_advantages,
    overlong_penalty,
    pass_at_k,
    policy_loss,
)

TOL = 1e-6


# ------------------------------------------------------------------------------------------------ advantages
@pytest.mark.parametrize(
    ("estimator", "expected"),
    [("grpo", [1.5, -0.5, -0.5, -0.5]), ("drgrpo", [0.75, -0.25, -0.25, -0.25]), ("rloo", [1, -1 / 3, -1 / 3, -1 / 3])],
)
def test_group_advantages_known_vector(estimator: str, expected: list[float]) -> None:
    r = torch.tensor([1.0, 0, 0, 0, 1, 1, 1, 1])
    g = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    adv, keep = group_advantages(r, g, estimator)
    assert torch.allclose(adv[:4], torch.tensor(expected), atol=1e-5)  # grpo: σ = 0.5 (Bessel), +1e-6
    assert adv[4:].abs().max() == 0 and keep.tolist() == [True] * 4 + [False] * 4  # all-equal group


def test_overlong_shaping_and_pass_at_k() -> None:
    pen = overlong_penalty(torch.tensor([10, 48, 56, 64, 70]), max_len=64, cache_len=16)
    assert torch.allclose(pen, torch.tensor([0.0, 0.0, -0.5, -1.0, -1.0]))
    assert pass_at_k(10, 0, 4) == 0.0 and pass_at_k(10, 10, 4) == 1.0 and pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(4, 2))


# ------------------------------------------------------------------------------------------------ loss
def test_policy_loss_hand_computed_two_sequences() -> None:
    """Seq 1: A = +1, ρ = (1, e^0.5 ≈ 1.6487 → clipped 1.2); seq 2: A = −1, ρ = (e^−0.5 ≈ 0.6065, 1; masked).
    ℓ = [−1, −1.2 (clip: max(−1.6487, −1.2)), 0.8 (max(0.6065, 0.8)), ·] → token-mean over 3 tokens."""
    logp = torch.tensor([[0.0, 0.5], [-0.5, 0.0]])
    old = torch.zeros(2, 2)
    adv = torch.tensor([1.0, -1.0])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    loss, stats, per_tok = policy_loss(logp, old, adv, mask)
    assert float(loss) == pytest.approx((-1.0 - 1.2 + 0.8) / 3, abs=TOL)
    assert stats["clip/upper"] == pytest.approx(1 / 3) and stats["clip/lower"] == pytest.approx(1 / 3)
    sm, _, _ = policy_loss(logp, old, adv, mask, loss_agg="seq-mean-token-mean")
    assert float(sm) == pytest.approx(((-1.0 - 1.2) / 2 + 0.8) / 2, abs=TOL)
    cm, _, _ = policy_loss(logp, old, adv, mask, loss_agg="constant", max_len=4)
    assert float(cm) == pytest.approx((-1.0 - 1.2 + 0.8) / (2 * 4), abs=TOL)


def test_masked_tokens_zero_gradient_and_equal_physically_removed_batch() -> None:
    torch.manual_seed(0)
    logp = (torch.randn(3, 5) * 0.1).requires_grad_()
    old = torch.randn(3, 5) * 0.1
    adv = torch.tensor([0.7, -1.2, 0.3])
    mask = torch.ones(3, 5)
    mask[1, 2:] = 0
    mask[2, 0] = 0
    loss, _, _ = policy_loss(logp, old, adv, mask)
    loss.backward()
    assert logp.grad[mask == 0].abs().max() == 0
    # same loss as the flat list of the kept tokens only
    keep = mask.bool()
    flat, _, _ = policy_loss(
        logp.detach()[keep][None],
        old[keep][None],
        adv[:, None].expand(3, 5)[keep][None],
        torch.ones(1, int(keep.sum())),
    )
    assert float(loss.detach()) == pytest.approx(float(flat), abs=TOL)


def test_weights_do_not_enter_the_denominator() -> None:
    logp, old = torch.randn(2, 4) * 0.1, torch.zeros(2, 4)
    adv, mask = torch.tensor([1.0, -0.5]), torch.ones(2, 4)
    base, _, _ = policy_loss(logp, old, adv, mask)
    doubled, _, _ = policy_loss(logp, old, adv, mask, weights=torch.full((2, 4), 2.0))
    zeroed, _, _ = policy_loss(logp, old, adv, mask, weights=torch.tensor([[0.0] * 4, [1.0] * 4]))
    per = policy_loss(logp, old, adv, mask)[2]
    assert float(doubled) == pytest.approx(2 * float(base), abs=TOL)
    assert float(zeroed) == pytest.approx(float(per[1].sum()) / 8, abs=TOL)  # still / 8, not / 4


def test_gradient_at_ratio_one_and_clipping_regimes() -> None:
    # ρ = 1: ∂L/∂logp_t = −A_t m_t / Σ m
    logp = torch.zeros(2, 3, requires_grad=True)
    adv = torch.tensor([2.0, -1.0])
    mask = torch.tensor([[1.0, 1, 0], [1, 1, 1]])
    policy_loss(logp, logp.detach().clone(), adv, mask)[0].backward()
    assert torch.allclose(logp.grad, -adv[:, None] * mask / 5)
    # A > 0 and ρ > 1 + ε_h: clipped, zero gradient
    lp = torch.full((1, 2), 0.5, requires_grad=True)
    policy_loss(lp, torch.zeros(1, 2), torch.tensor([1.0]), torch.ones(1, 2), eps_high=0.28)[0].backward()
    assert lp.grad.abs().max() == 0
    # A < 0 and huge ρ: the dual clip caps the loss at −A·c
    loss, st, _ = policy_loss(
        torch.full((1, 1), 5.0), torch.zeros(1, 1), torch.tensor([-2.0]), torch.ones(1, 1), dual_clip=10.0
    )
    assert float(loss) == pytest.approx(20.0) and st["clip/dual"] == 1.0


# ------------------------------------------------------------------------------------------------ plug-ins
class _Identity(Plugin):
    def token_weights(self, ctx: LossContext) -> TokenWeights:
        return TokenWeights(torch.ones_like(ctx.logp), torch.ones_like(ctx.mask), {"w": 1.0})

    def extra_loss(self, ctx: LossContext) -> torch.Tensor:
        return ctx.logp.sum() * 0.0


class _W(Plugin):
    def __init__(self, w: torch.Tensor | None, m: torch.Tensor | None) -> None:
        self.w, self.m = w, m

    def token_weights(self, ctx: LossContext) -> TokenWeights:
        return TokenWeights(self.w, self.m)


def test_chained_hooks_multiply_weights_and_and_masks() -> None:
    z = torch.zeros(1, 3)
    ctx = LossContext(z, z, z, z, z, z, z, torch.zeros(1), ["solve"], torch.zeros(1), 0)
    chain = PluginChain(
        [
            _W(torch.tensor([[2.0, 3.0, 4.0]]), torch.tensor([[1, 1, 0]])),
            _W(torch.tensor([[0.5, 2.0, 1.0]]), None),
            _W(None, torch.tensor([[1, 0, 1]])),
        ]
    )
    tw = chain.token_weights(ctx)
    assert tw.weight.tolist() == [[1.0, 6.0, 4.0]] and tw.mask.tolist() == [[True, False, False]]


@pytest.fixture(scope="module")
def micro(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from compute.core.lm.sft import SFTConfig, load_or_build
    from compute.core.tasks import TaskConfig

    d = tmp_path_factory.mktemp("data")
    cfg = SFTConfig(
        task=TaskConfig(min_digits=1, max_digits=1, ops="+"),
        size="micro",
        tokens=6000,
        batch_size=16,
        eval_every=1000,
        n_val=8,
        max_new=24,
        max_len=48,
        extra_tokens=("<solve>",),
    )
    return cfg, d, load_or_build(cfg, d)


def _trainer(res, plugins=None, **kw):  # type: ignore[no-untyped-def]
    import copy

    base = {"prompts_per_step": 3, "group_size": 4, "max_new": 24, "n_eval": 8, "eval_every": 0, "record_every": 0}
    cfg = GRPOConfig(**{**base, **kw})
    return GRPOTrainer(copy.deepcopy(res.model), res.task, cfg, plugins)


def _loss_and_grads(tr: GRPOTrainer, batch, backward: bool):  # type: ignore[no-untyped-def]
    tr.model.zero_grad(set_to_none=True)
    tr.model.train()
    loss, _ = tr.minibatch_loss(batch, backward=backward)
    if not backward:
        loss.backward()
    return float(loss), torch.cat([p.grad.flatten() for p in tr.model.parameters()])


def _fixed_batch(tr: GRPOTrainer):  # type: ignore[no-untyped-def]
    batch, _ = tr.collect()
    batch.adv = torch.linspace(-1, 1, len(batch))[:, None] * batch.response_mask  # non-trivial advantages
    tr.recompute_old(batch)
    batch.old_logp = batch.old_logp + 0.05 * torch.randn(
        batch.old_logp.shape, generator=torch.Generator().manual_seed(0)
    )
    return batch


def test_identity_plugins_are_neutral_and_micro_batches_share_the_denominator(micro) -> None:  # type: ignore[no-untyped-def]
    _, _, res = micro
    plain = _trainer(res)
    batch = _fixed_batch(plain)
    l0, g0 = _loss_and_grads(plain, batch, False)
    ident = _trainer(res, [_Identity(), _Identity()])
    l1, g1 = _loss_and_grads(ident, batch, False)
    assert abs(l0 - l1) < 1e-7 and float((g0 - g1).abs().max()) < 1e-7
    for agg in ("token-mean", "seq-mean-token-mean", "constant"):
        full = _trainer(res, loss_agg=agg)
        lf, gf = _loss_and_grads(full, batch, False)
        mic = _trainer(res, loss_agg=agg, micro_batch_size=5)
        lm, gm = _loss_and_grads(mic, batch, True)
        assert abs(lf - lm) < 1e-6 and float((gf - gm).abs().max()) < 1e-6, agg


def test_one_update_moves_logp_along_the_advantage(micro) -> None:  # type: ignore[no-untyped-def]
    """One on-policy step is ascent on the surrogate J(θ) = Σ_i A_i Σ_t log π_θ: the step Δθ taken by ``update``
    has a positive inner product with ∇J (the first-order change of J).  Measured through the gradient rather than
    by re-evaluating log π after the step: at a small lr the change of the summed log-probabilities is at float32
    resolution (~1e-5) and its sign is noise.  (Whether every A > 0 response rises individually is not a theorem:
    the responses share parameters.)"""
    _, _, res = micro
    tr = _trainer(res, lr=1e-5)
    batch = _fixed_batch(tr)
    batch.old_logp, _ = tr._forward(tr.model, batch)  # on-policy: ρ = 1
    batch.old_logp = batch.old_logp.detach()
    seq_adv = batch.adv.sum(-1) / batch.response_mask.sum(-1).clamp(min=1)  # A_i (constant over tokens)

    params = [p for p in tr.model.parameters() if p.requires_grad]
    tr.model.train()
    tr.model.zero_grad(set_to_none=True)
    surrogate = (seq_adv * (tr._forward(tr.model, batch)[0] * batch.response_mask).sum(-1)).sum()
    grads = torch.autograd.grad(surrogate, params, allow_unused=True)
    before = [p.detach().clone() for p in params]
    tr.update(batch)
    steps = [p.detach() - b for p, b in zip(params, before, strict=True)]
    first_order = sum(float((g * s).sum()) for g, s in zip(grads, steps, strict=True) if g is not None)
    assert first_order > 0
    assert max(float(s.abs().max()) for s in steps) > 0  # the step did move the policy


class _Planner(Plugin):
    """Two phases: phase 0 forces the role token, phase 1 asks for one more sample per problem."""

    extra_tokens = ("<solve>",)

    def plan_rollouts(self, specs: list[RolloutSpec], state) -> list[RolloutSpec]:  # type: ignore[no-untyped-def]
        if state.phase == 0:
            for s in specs:
                s.force_prefix = [state.task.tokenizer.stoi["<solve>"]]
            return specs
        if state.phase == 1:
            prev = state.rollouts[0]
            return [RolloutSpec(prev.specs[0].prompt, 2, prev.problems[0], "extra", role="second")]
        return []


def test_trainer_runs_with_phases_dynamic_sampling_and_streams(micro) -> None:  # type: ignore[no-untyped-def]
    from compute.core.reporter import MemoryReporter

    _, _, res = micro
    tr = _trainer(
        res,
        [_Planner()],
        steps=2,
        eval_every=1,
        overlong_cache=4,
        kl_coef=0.1,
        mini_batches=2,
        passk_problems=2,
        record_every=1,
    )
    rep = MemoryReporter()
    hist = tr.train(rep)
    assert len(hist) == 2 and "acc/heldout" in hist[-1] and "pass/at4" in hist[-1]
    batch, _ = tr.collect()
    first = batch.phase == 0
    assert len(batch) == 3 * 4 + 2 and batch.roles.count("second") == 2
    assert (batch.response[first, 0] == res.task.tokenizer.stoi["<solve>"]).all()
    for key in ("reward/train", "entropy/mean", "entropy/q90", "clip/upper", "grad/norm", "kl/approx", "kl/ref"):
        assert len(rep.values(key)) == 2, key
    assert "tokens/step00001.npz" in rep.artifacts
    dyn = _trainer(res, dynamic_sampling=True, max_rounds=2)
    b2, st = dyn.collect()
    assert 1 <= st["groups/rounds"] <= 2
    for g in torch.unique(b2.groups):  # only groups with reward spread survive
        assert b2.rewards[b2.groups == g].std() > 0


def test_sft_cache_hits_and_rebuilds(micro) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from compute.core.lm.sft import checkpoint_path, load_or_build

    cfg, d, res = micro
    assert not res.cached and Path(res.path).exists()
    again = load_or_build(cfg, d)
    assert again.cached and torch.equal(again.model.emb.weight, res.model.emb.weight)
    assert checkpoint_path(replace(cfg, lr=5e-4), d) != res.path
    assert checkpoint_path(replace(cfg, extra_tokens=("<solve>", "<adv>")), d) != res.path
    with pytest.raises(ValueError):
        GRPOTrainer(res.model, res.task, GRPOConfig(), [type("P", (Plugin,), {"extra_tokens": ("<adv>",)})()])

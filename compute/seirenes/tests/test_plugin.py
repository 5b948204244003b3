"""Known-answer tests of the bundle planner, groups, advantages, role weights, reduction and masking (spec §5)."""

from dataclasses import replace

import pytest
import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.rl.trainer import GRPOConfig, GRPOTrainer
from compute.seirenes.config import SeirenesConfig
from compute.seirenes.plugin import ROLES, Seirenes, SelfPlayConfig, role_weights
from compute.seirenes.task import SeirenesSFTConfig, make_task

CFG = GRPOConfig(
    steps=1,
    prompts_per_step=3,
    group_size=2,
    max_new=12,
    eval_every=0,
    n_eval=4,
    record_every=0,
    post_update_kl=False,
    seed=0,
)


def _trainer(sp: SelfPlayConfig, seed: int = 0) -> GRPOTrainer:
    task = make_task(SeirenesSFTConfig())
    torch.manual_seed(seed)
    model = TinyLM(LMConfig.sized("micro", task.tokenizer.vocab_size, max_len=192))
    return GRPOTrainer(model, task, replace(CFG, seed=seed), [Seirenes(sp)])


def _force_valid_hints(tr: GRPOTrainer) -> None:
    """Make the untrained Adversary's hints valid: rewrite its decoded texts before phase 1 (test hook)."""
    orig = tr._generate

    def gen(specs, phase):
        b = orig(specs, phase)
        for i, r in enumerate(b.roles):
            if r == "adv" and i % 2 == 0:
                b.texts[i] = "<note> zoe also has 123 pens . <eoh>"
        return b

    tr._generate = gen


def test_groups_count_and_zero_mean_advantages():
    sp = SelfPlayConfig(G=3, K=2, G_h=2)
    tr = _trainer(sp)
    _force_valid_hints(tr)
    batch, _ = tr.collect()
    recs = tr.state.extra["seirenes_adv"]
    n_valid = sum(r["valid"] for r in recs)
    assert n_valid == 3  # one of the two hints per question was rewritten to a valid one
    Q = CFG.prompts_per_step
    reasoner = {int(g) for g, r in zip(batch.groups, batch.roles, strict=False) if r != "adv"}
    adv = {int(g) for g, r in zip(batch.groups, batch.roles, strict=False) if r == "adv"}
    assert len(reasoner) == Q + n_valid and len(adv) == Q
    assert len(batch) == Q * (sp.G + sp.K) + n_valid * sp.G_h
    for g in torch.unique(batch.groups):
        a = batch.seq_adv[batch.groups == g]
        r = batch.rewards[batch.groups == g]
        assert abs(float(a.mean())) < 1e-6
        if float(r.max()) == float(r.min()):
            assert torch.all(a == 0)
    # adversary rewards follow the formula: invalid hints get −c_inv
    adv_rows = [i for i, r in enumerate(batch.roles) if r == "adv"]
    for i, rec in zip(adv_rows, recs, strict=False):
        if not rec["valid"]:
            assert abs(float(batch.rewards[i]) + sp.c_inv) < 1e-6
        else:  # recompute p̂_clean and p̂_hint from the batch's correctness flags
            q, k = rec["q"], rec["k"]
            cl = [j for j, r in enumerate(batch.roles) if r == "solve" and batch.specs[j].meta["q"] == q]
            hi = [
                j
                for j, r in enumerate(batch.roles)
                if r == "hinted" and batch.specs[j].meta["q"] == q and batch.specs[j].meta["k"] == k
            ]
            pc, ph = float(batch.correct[cl].float().mean()), float(batch.correct[hi].float().mean())
            assert abs(float(batch.rewards[i]) - max(0.0, pc - ph)) < 1e-6


def test_role_shares_equal():
    roles = ["solve", "solve", "hinted", "adv", "adv", "adv"]
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]])
    w = role_weights(roles, mask, (1 / 3, 1 / 3, 1 / 3))
    sums = [float((w * mask)[[i for i, x in enumerate(roles) if x == r]].sum()) for r in ROLES]
    assert all(abs(s - mask.sum() / 3) < 1e-5 for s in sums)
    assert abs(float((w * mask).sum()) - float(mask.sum())) < 1e-4


def test_adv_share_splits_the_token_weight():
    """adv_share a: the Adversary's tokens carry a of the weight, clean and hinted (1 − a)/2 each; 1/3 is exact."""
    assert SeirenesConfig().selfplay("seirenes").shares == SelfPlayConfig().shares == (1 / 3, 1 / 3, 1 / 3)
    roles = ["solve", "solve", "hinted", "adv", "adv", "adv"]
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]])
    shares = SeirenesConfig(adv_share=0.1).selfplay("seirenes").shares
    assert shares == pytest.approx((0.45, 0.45, 0.1))
    w = role_weights(roles, mask, shares)
    sums = [float((w * mask)[[i for i, x in enumerate(roles) if x == r]].sum()) for r in ROLES]
    n = float(mask.sum())
    assert sums == pytest.approx([0.45 * n, 0.45 * n, 0.1 * n], abs=1e-4)
    # without Adversary tokens (the static arm) the two solve roles split everything equally whatever a is
    w = role_weights(roles[:3], mask[:3], shares)
    assert float((w * mask[:3])[:2].sum()) == pytest.approx(float((w * mask[:3])[2].sum()), abs=1e-5)
    with pytest.raises(ValueError):
        SeirenesConfig(adv_share=1.0).shares()


def test_reduction_to_plain_grpo_with_K0():
    """K = 0, G = group_size: same rollouts, rewards, loss and gradients as the core's plain GRPO."""
    task = make_task(SeirenesSFTConfig())
    outs = []
    for plugins in ([], [Seirenes(SelfPlayConfig(G=CFG.group_size, K=0))]):
        torch.manual_seed(0)
        model = TinyLM(LMConfig.sized("micro", task.tokenizer.vocab_size, max_len=192))
        tr = GRPOTrainer(model, task, CFG, plugins)
        batch, _ = tr.collect()
        tr.recompute_old(batch)
        loss, _ = tr.minibatch_loss(batch, backward=True)
        outs.append((batch, loss.detach(), [p.grad.clone() for p in model.parameters()]))
    (b0, l0, g0), (b1, l1, g1) = outs
    assert torch.equal(b0.response, b1.response) and torch.equal(b0.rewards, b1.rewards)
    assert torch.allclose(l0, l1, atol=1e-7, rtol=0)
    assert all(torch.allclose(a, b, atol=1e-7, rtol=0) for a, b in zip(g0, g1, strict=False))


def test_prompt_and_hint_positions_get_no_gradient():
    """d loss / d logits is exactly 0 at every position that predicts a prompt token (hints included) and after
    the response ends; it is non-zero somewhere on the response."""
    tr = _trainer(SelfPlayConfig(mode="static", G=2, K=1, G_h=2))
    batch, _ = tr.collect()
    tr.recompute_old(batch)
    batch.adv = batch.adv + batch.response_mask  # make every response token carry a non-zero advantage
    kept = []

    def hook(_module, _inp, out):
        out.retain_grad()
        kept.append(out)

    h = tr.model.register_forward_hook(hook)
    loss, _ = tr.minibatch_loss(batch, backward=True)
    h.remove()
    g = kept[-1].grad.abs().sum(-1)  # [N, P + R - 1]
    P = batch.prompt.shape[1]
    assert torch.all(g[:, : P - 1] == 0)  # positions predicting prompt tokens (question and hint)
    resp = g[:, P - 1 :]
    assert torch.all(resp[batch.response_mask == 0] == 0)
    assert float(resp[batch.response_mask > 0].sum()) > 0
    assert any(r == "hinted" for r in batch.roles)


def test_determinism_first_bundle():
    a, b = _trainer(SelfPlayConfig(G=2, K=2, G_h=2), 3), _trainer(SelfPlayConfig(G=2, K=2, G_h=2), 3)
    ba, _ = a.collect()
    bb, _ = b.collect()
    assert ba.texts == bb.texts and torch.equal(ba.rewards, bb.rewards)


def test_compound_hints_in_static_and_selfplay_bundles():
    """S = 3: the static arm's hints are valid compounds whose sentence families the stats count; the Adversary's
    two-sentence hint passes the checker and gets its own hinted group."""
    from compute.seirenes.hints import check_hint, family_parts

    tr = _trainer(SelfPlayConfig(mode="static", G=2, K=4, G_h=2, max_sentences=3, max_hint_tokens=40))
    batch, _ = tr.collect()
    firsts = {}
    for i, r in enumerate(batch.roles):
        if r == "hinted":
            m = batch.specs[i].meta
            assert check_hint(m["hint"] + " <eoh>", batch.problems[i].answer, 40, max_sentences=3)[:2] == (
                True,
                m["family"],
            )
            firsts.setdefault((m["q"], m["k"]), m["family"])
    st = tr.state.extra["seirenes_stats"]
    n_sent = [len(family_parts(f)) for f in firsts.values()]
    assert sum(st[f"family/F{j}"] for j in range(1, 5)) == sum(n_sent)
    assert abs(st["selfplay/sentences_per_hint"] - sum(n_sent) / len(n_sent)) < 1e-9

    tr = _trainer(SelfPlayConfig(G=2, K=2, G_h=2, max_sentences=2, max_hint_tokens=32))
    orig = tr._generate

    def gen(specs, phase):
        b = orig(specs, phase)
        for i, r in enumerate(b.roles):
            if r == "adv":
                b.texts[i] = "<note> zoe also has 123 pens . <remember> <multiply> 3 . <eoh>"
        return b

    tr._generate = gen
    batch, _ = tr.collect()
    recs = tr.state.extra["seirenes_adv"]
    golds = [int(tr.state.extra["seirenes_problems"][r["q"]].answer) for r in recs]
    assert all(r["family"] == "F1+F2" for r in recs)
    assert [r["valid"] for r in recs] == [g not in (123, 3) for g in golds]  # the leak filter sees both sentences
    assert any(r["valid"] for r in recs)
    assert sum(r == "hinted" for r in batch.roles) == sum(r["valid"] for r in recs) * 2
    assert tr.state.extra["seirenes_stats"]["selfplay/sentences_per_hint"] == 2.0


def test_frozen_adversary_arm():
    """Arm (d): hints come from a copy taken before the first update (no Adversary rows, no Adversary loss); the
    copy stays at the start when the trained model moves; groups = Q clean + one per valid hint."""
    sp = SelfPlayConfig(mode="frozen_adv", G=2, K=2, G_h=2)
    tr = _trainer(sp)
    plug = tr.chain.plugins[0]
    start = {k: v.clone() for k, v in tr.model.state_dict().items()}
    raw = plug.frozen_hint_texts  # bound later, once the copy exists
    calls = []

    def texts(problems, state):
        out = raw(problems, state)  # the untrained copy really samples K texts per problem
        assert [len(t) for t in out] == [sp.K] * len(problems)
        calls.append(len(problems))
        return [[t[0], "<note> zoe also has 123 pens . <eoh>"] for t in out]

    plug.frozen_hint_texts = texts
    batch, _ = tr.collect()
    assert calls == [CFG.prompts_per_step] and "adv" not in batch.roles
    recs = tr.state.extra["seirenes_adv"]
    golds = [int(tr.state.extra["seirenes_problems"][r["q"]].answer) for r in recs]
    n_valid = sum(r["valid"] for r in recs)
    assert n_valid >= sum(g != 123 for g in golds[1::2])  # the rewritten second hint of each question is valid
    groups = {int(g) for g in batch.groups}
    assert len(groups) == CFG.prompts_per_step + n_valid
    assert len(batch) == CFG.prompts_per_step * sp.G + n_valid * sp.G_h
    w = plug.token_weights(tr.context(batch, batch.old_logp, batch.old_entropy)).weight
    m = batch.response_mask
    solve = [i for i, r in enumerate(batch.roles) if r == "solve"]
    assert abs(float((w * m)[solve].sum()) - float(m.sum()) / 2) < 1e-3  # clean and hinted split the weight
    with torch.no_grad():  # an update of the trained model (the untrained micro model's advantages are all 0)
        for p in tr.model.parameters():
            p.add_(0.01)
    assert all(torch.equal(v, plug.frozen.state_dict()[k]) for k, v in start.items())  # the copy stays at the start
    assert not torch.equal(next(iter(plug.frozen.parameters())), next(iter(tr.model.parameters())))

"""Known answers for the rollout quota, the cross-route credit and the traces (spec steer §5)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from compute.steer.evaluate import h2, spearman
from compute.steer.plugin import (
    RunningRMS,
    quota,
    route_logit_gradient,
    steer_advantages,
    within_route_advantages,
)
from compute.steer.scenes import TIERS, draw_scene
from compute.steer.traces import DIRECT, THINK, make_tokenizer, parse_plan, response_text, scene_text


# ------------------------------------------------------------------ (i) quota
@pytest.mark.parametrize(("p_c", "expected"), [(0.5, (4, 4)), (0.9, (2, 6)), (0.99, (1, 7)), (0.1, (2, 2))])
def test_quota_known_values(p_c: float, expected: tuple[int, int]) -> None:
    assert quota(p_c, 8, 0.5) == expected


def test_quota_invariants() -> None:
    assert h2(0.9) == pytest.approx(0.469, abs=1e-3) and h2(0.99) == pytest.approx(0.0808, abs=1e-3)
    assert quota(1.0, 8, 0.5) == (0, 8) and quota(0.0, 8, 0.5) == (0, 0)  # u = 0 → m = 0
    for G in (4, 8, 16):
        for p in np.linspace(0, 1, 41):
            for beta in (0.0, 0.25, 0.5):
                m, n_c = quota(float(p), G, beta)
                assert 0 <= m <= G // 2 and m <= n_c <= G - m
    assert quota(1.0, 8, 0.5, m_min=1) == (1, 7)  # optional floor
    assert quota(0.97, 8, 0.5, mode="fixed_half") == (4, 4)


# ------------------------------------------------------------------ (ii) cross-route credit
def test_cross_route_credit_on_a_known_batch() -> None:
    # 3 CoT samples (score .9, .8, .7; 30 tokens) and 5 direct (score .5, .4, .6, .5, .5; 10 tokens)
    r = np.array([0.9, 0.8, 0.7, 0.5, 0.4, 0.6, 0.5, 0.5])
    c = np.array([30, 30, 30, 10, 10, 10, 10, 10], dtype=float)
    cot = np.array([1, 1, 1, 0, 0, 0, 0, 0], dtype=bool)
    rc = steer_advantages(r, c, cot, lam=1e-3, sigma=0.1)
    # Δ = 0.8 − 0.5 − 1e-3·20 = 0.28; Δ/σ = 2.8
    assert rc.delta == pytest.approx(0.28)
    assert np.allclose(rc.route_adv, [2.8, 2.8, 2.8, -2.8, -2.8, -2.8, -2.8, -2.8])
    assert np.allclose(rc.content_adv[:3], [1.0, 0.0, -1.0], atol=1e-5)  # (r − .8)/.1
    assert rc.content_adv[3:].sum() == pytest.approx(0.0, abs=1e-9)
    # clip at ±5
    assert np.allclose(steer_advantages(r, c, cot, 1e-3, 0.01).route_adv[:3], 5.0)
    # a large λ flips the sign: CoT no longer pays for its 20 extra tokens
    assert steer_advantages(r, c, cot, 0.02, 0.1).delta == pytest.approx(-0.1)


def test_single_route_group_or_zero_delta_gives_zero_route_credit() -> None:
    r = np.array([0.9, 0.1, 0.5, 0.5])
    rc = steer_advantages(r, np.full(4, 9.0), np.ones(4, dtype=bool), 1e-3, 0.1)
    assert rc.delta is None and np.all(rc.route_adv == 0)
    rc = steer_advantages(np.array([0.6, 0.4, 0.5]), np.array([20.0, 20.0, 20.0]), np.array([1, 1, 0], bool), 0, 0.1)
    assert rc.delta == pytest.approx(0.0, abs=1e-12) and np.allclose(rc.route_adv, 0.0)


@pytest.mark.parametrize("p_c", [0.05, 0.5, 0.93])
def test_route_logit_first_order_change_has_the_sign_of_delta(p_c: float) -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        G = 8
        n_c = int(rng.integers(1, G))
        cot = np.arange(G) < n_c
        r = rng.random(G)
        rc = steer_advantages(r, np.where(cot, 30.0, 10.0), cot, 1e-3, 0.1)
        a_hat = rc.route_adv[0]
        # autograd on a route log-odds z with σ(z) = p_c: d/dz Σ Â_i log π(route_i)
        z = torch.tensor(float(np.log(p_c / (1 - p_c))), requires_grad=True)
        lp = torch.stack([torch.nn.functional.logsigmoid(z), torch.nn.functional.logsigmoid(-z)])
        obj = sum(float(rc.route_adv[i]) * lp[0 if cot[i] else 1] for i in range(G))
        obj.backward()
        expected = a_hat * (n_c * (1 - p_c) + (G - n_c) * p_c)
        assert float(z.grad) == pytest.approx(expected, rel=1e-5)
        assert route_logit_gradient(rc.route_adv, cot, p_c) == pytest.approx(expected, rel=1e-9)
        assert np.sign(float(z.grad)) == np.sign(rc.delta)


def test_within_route_advantages_zero_mean_and_running_rms() -> None:
    a = within_route_advantages(np.array([1.0, 0.0, 0.0, 0.0]))
    assert np.allclose(a, [1.5, -0.5, -0.5, -0.5], atol=1e-5)  # the core's GRPO (Bessel σ = 0.5)
    assert within_route_advantages(np.array([0.3])).tolist() == [0.0]
    rms = RunningRMS(0.1, 0.99)
    rms.update(1.0)
    assert rms.value == pytest.approx(np.sqrt(0.99 * 0.01 + 0.01))


# ------------------------------------------------------------------ traces
def test_prompts_have_no_tier_and_routes_share_the_parser() -> None:
    tok = make_tokenizer()
    rng = np.random.default_rng(1)
    for tier in TIERS:
        s, a = draw_scene(rng, tier)
        text = scene_text(s)
        assert not any(t in text.split() for t in TIERS)
        assert tok.decode(tok.encode(text)) == text  # exact round trip
        plan = a.expert.actions()
        for route in (THINK, DIRECT):
            resp = response_text(s, a.expert, route)
            assert parse_plan(resp) == (route, plan)
            assert tok.decode(tok.encode(resp)) == resp
        assert len(response_text(s, a.expert, THINK).split()) > len(response_text(s, a.expert, DIRECT).split()) + 10
    assert parse_plan(f"{DIRECT} As As") == (DIRECT, None)
    assert parse_plan(f"{THINK} L0 free As As As As As As As As") == (THINK, None)  # no '|'
    assert parse_plan("As As As As As As As As") == (None, None)
    assert parse_plan("") == (None, None)


def test_spearman() -> None:
    assert spearman(np.array([0, 1, 2]), np.array([0.1, 0.5, 0.9])) == pytest.approx(1.0)
    assert spearman(np.array([0, 0, 1, 1]), np.array([1.0, 1.0, 0.0, 0.0])) == pytest.approx(-1.0)


def _known_batch(aux_rows: tuple[int, ...] = ()) -> tuple[object, object, list[int]]:
    """Six rows in two groups: group 0 = two <think> rows (rewards 1.0, 0.8) and two <direct> (0.5, 0.3), group 1 =
    two <think> rows (0.9, 0.7); ``aux_rows`` are marked as the auxiliary CoT group."""
    from types import SimpleNamespace

    from compute.core.rl.plugins import RolloutSpec
    from compute.core.rl.trainer import RolloutBatch
    from compute.steer.plugin import AUX

    tok = make_tokenizer()
    th, di = tok.stoi[THINK], tok.stoi[DIRECT]
    lengths = [6, 6, 3, 3, 6, 6]  # CoT rows longer than direct rows
    first = [th, th, di, di, th, th]
    R = 6
    resp = torch.zeros(6, R, dtype=torch.long)
    mask = torch.zeros(6, R)
    for i, (n, f) in enumerate(zip(lengths, first, strict=True)):
        resp[i, :n] = 5
        resp[i, 0] = f
        mask[i, :n] = 1
    prob = SimpleNamespace(data={"tier": "hard"})
    meta = {"p_c": 0.6, "q_c": 0.5, "tier": "hard"}
    specs = [RolloutSpec([1], 1, prob, 0, meta={**meta, AUX: i in aux_rows}) for i in range(6)]
    batch = RolloutBatch(
        prompt=torch.ones(6, 1, dtype=torch.long),
        prompt_mask=torch.ones(6, 1),
        response=resp,
        response_mask=mask,
        sample_logp=torch.zeros(6, R),
        sample_entropy=torch.zeros(6, R),
        groups=torch.tensor([0, 0, 0, 0, 1, 1]),
        roles=["solve"] * 6,
        problems=[prob] * 6,
        specs=specs,
        texts=[""] * 6,
        phase=torch.zeros(6, dtype=torch.long),
    )
    state = SimpleNamespace(task=SimpleNamespace(tokenizer=tok), extra={})
    return batch, state, lengths


def test_advantages_hook_on_a_known_batch() -> None:
    """Route credit lands on the route token (position 0), within-route GRPO on the content, zeros on padding;
    a single-route group gets no route credit; length-penalty rewards subtract λ·tokens."""
    from compute.steer.plugin import SteerPlugin

    batch, state, lengths = _known_batch()
    R = batch.response.shape[1]
    rewards = torch.tensor([1.0, 0.8, 0.5, 0.3, 0.9, 0.7])
    plug = SteerPlugin("steer", lam=0.01, sigma0=0.1, sigma_decay=0.0)  # decay 0: σ_Δ = |Δ| of this batch
    r = plug.assign_rewards(batch, rewards, state)
    assert torch.allclose(r, rewards)
    adv = plug.advantages(batch, torch.zeros(6, R), state)
    # group 0: Δ = 0.9 − 0.4 − 0.01·(6 − 3) = 0.47 → Δ/σ = 1 (σ = |Δ|)
    assert plug.step_stats["delta/mean"] == pytest.approx(0.47)
    assert torch.allclose(adv[:4, 0], torch.tensor([1.0, 1.0, -1.0, -1.0]))
    c = 0.1 / (np.sqrt(0.02) + 1e-6)  # (r − μ)/(σ + 1e-6), Bessel σ of two values 0.2 apart = √0.02
    assert torch.allclose(adv[0, 1:6], torch.full((5,), c, dtype=torch.float32), atol=1e-5)
    assert torch.allclose(adv[2, 1:3], torch.full((2,), c, dtype=torch.float32), atol=1e-5)
    assert float(adv[2, 3:].abs().sum()) == 0.0  # padding
    # group 1: CoT only → no route credit, content still within-route
    assert torch.all(adv[4:, 0] == 0) and float(adv[4, 1]) == pytest.approx(c, abs=1e-5)
    assert plug.step_stats["route/two_route_groups"] == pytest.approx(0.5)
    lp = SteerPlugin("length_penalty", lam=0.01)
    r2 = lp.assign_rewards(batch, rewards, state)
    assert torch.allclose(r2, rewards - 0.01 * torch.tensor(lengths, dtype=torch.float32))


def test_auxiliary_cot_group_trains_content_only_and_stays_out_of_the_route_statistics(monkeypatch) -> None:
    """``cot_aux``: group 1 as the auxiliary group keeps its within-group content advantages, gets no route
    credit under STEER or plain GRPO, and the route statistics count group 0 only; plan_rollouts adds k forced
    <think> rollouts per scene under a key of their own, none for the forced-route baselines."""
    from types import SimpleNamespace

    from compute.core.rl.plugins import RolloutSpec
    from compute.steer import plugin as pl

    batch, state, _ = _known_batch(aux_rows=(4, 5))
    R = batch.response.shape[1]
    rewards = torch.tensor([1.0, 0.8, 0.5, 0.3, 0.9, 0.7])
    plug = pl.SteerPlugin("steer", lam=0.01, sigma0=0.1, sigma_decay=0.0, cot_aux=2)
    plug.assign_rewards(batch, rewards, state)
    adv = plug.advantages(batch, torch.zeros(6, R), state)
    c = 0.1 / (np.sqrt(0.02) + 1e-6)
    assert torch.all(adv[4:, 0] == 0) and float(adv[4, 1]) == pytest.approx(c, abs=1e-5)
    assert float(adv[5, 1]) == pytest.approx(-c, abs=1e-5)
    st = plug.step_stats
    assert st["route/two_route_groups"] == 1.0 and st["route/cot_rollouts"] == 0.5  # 2 of group 0's 4 rows
    assert st["tokens/per_scene"] == pytest.approx(4.5) and st["train/score"] == pytest.approx(0.65)
    assert st["aux/score"] == pytest.approx(0.8)
    g = pl.SteerPlugin("grpo", cot_aux=2)
    g.assign_rewards(batch, rewards, state)
    plain = torch.ones(6, R)
    out = g.advantages(batch, plain, state)
    assert torch.all(out[4:, 0] == 0) and torch.all(out[:4, 0] == 1) and torch.all(plain[4:, 0] == 1)

    tok = state.task.tokenizer
    monkeypatch.setattr(pl, "route_probs", lambda model, prompts, *a: (np.array([0.9, 0.2]), None))
    st2 = SimpleNamespace(phase=0, task=state.task, model=None, cfg=SimpleNamespace(temperature=1.0), extra={})
    prob = SimpleNamespace(data={"tier": "easy"})
    specs = [RolloutSpec([1], 8, prob, k) for k in ("a", "b")]
    out_specs = pl.SteerPlugin("steer", cot_aux=3).plan_rollouts(specs, st2)
    aux = [s for s in out_specs if s.meta.get(pl.AUX)]
    assert [(s.group_key, s.n, s.force_prefix) for s in aux] == [
        (("a", pl.AUX), 3, [tok.stoi[THINK]]),
        (("b", pl.AUX), 3, [tok.stoi[THINK]]),
    ]
    assert sum(s.n for s in out_specs if not s.meta.get(pl.AUX)) == 16  # the quota's G per scene is unchanged
    assert not any(s.meta.get(pl.AUX) for s in pl.SteerPlugin("always_cot", cot_aux=3).plan_rollouts(specs, st2))


def test_pareto_front() -> None:
    from compute.steer.run import pareto_front

    # (tokens, score): (10, .9) and (30, .95) are the front; (30, .9) and (12, .85) are dominated; ties stay
    pts = [(10.0, 0.9), (30.0, 0.95), (30.0, 0.9), (12.0, 0.85), (10.0, 0.9)]
    assert pareto_front(pts) == [0, 1, 4]


def test_rel_cot_known_scene_and_round_trip() -> None:
    from compute.steer.scenes import analyse
    from compute.steer.sim import Agent, Scene
    from compute.steer.traces import cot_rel, lane_verdicts, rel_track

    # ego L1 at 10 m/s; L0: a car 4 m ahead at 12 m/s (after 4 s: 4 + 4·12 − 40 = 12 m ahead);
    # L1 closed at 30 m; L2: a car far behind and slower (never near: left out of the trace)
    s = Scene(1, 10, [Agent(0, 4, 12), Agent(2, -40, 8)], closure=(1, 30))
    a = analyse(s)
    assert rel_track(s) == [(0, 4, 2, 12), (2, -40, -2, -48)]
    v = lane_verdicts(s)
    assert set(v) == {0, 1, 2} and all(0 <= x <= 10 for x in v.values())
    assert v[1] < 10  # the closed lane cannot keep full progress
    assert max(v.values()) == round(10 * a.expert_score)  # the best lane's value is the expert's score
    c = cot_rel(s, a.expert)
    assert c.startswith(f"L0 + 4 + 2 + 12 {v[0]} L1 cl 30 {v[1]} L2 free {v[2]} ; meta ")  # L2's car is too far
    e = a.expert
    assert c.endswith(f"meta {e.a1} {e.k} {e.a2} {e.lat} {e.j}")
    # a braking lead in the ego lane follows its script: 20 m ahead at 10 m/s braking 4 m/s² stops after 12.5 m
    s2 = Scene(0, 10, [Agent(0, 20, 10, "brk", 4)])
    assert rel_track(s2) == [(0, 20, 0, round(20 + 12.5 - 40))]
    # the trace is in the vocabulary and parses like the lanes style; lane 2 is unreachable from lane 0
    tok = make_tokenizer()
    rng = np.random.default_rng(3)
    for tier in TIERS:
        sc, an = draw_scene(rng, tier)
        resp = response_text(sc, an.expert, THINK, "rel")
        assert tok.decode(tok.encode(resp)) == resp
        assert parse_plan(resp) == (THINK, an.expert.actions())
    assert "L2" not in cot_rel(s2, analyse(s2).expert)


def test_route_and_cot_content_weights() -> None:
    """ω lands on the route token of every row, κ on the content tokens of <think> rows only, 1 elsewhere."""
    from types import SimpleNamespace

    from compute.steer.plugin import SteerPlugin

    tok = make_tokenizer()
    think, direct = tok.stoi[THINK], tok.stoi[DIRECT]
    response = torch.tensor([[think, 5, 6, 7], [direct, 5, 6, 7], [think, 8, 9, 0]])
    ctx = SimpleNamespace(
        mask=torch.ones(3, 4),
        batch=SimpleNamespace(response=response),
        state=SimpleNamespace(task=SimpleNamespace(tokenizer=tok), model=SimpleNamespace()),  # no route head
    )
    assert SteerPlugin().token_weights(ctx) is None  # both neutral: plain token-mean
    w = SteerPlugin(route_weight=4.0, cot_weight=2.5).token_weights(ctx).weight
    assert torch.equal(w[:, 0], torch.full((3,), 4.0))
    assert torch.equal(w[0, 1:], torch.full((3,), 2.5)) and torch.equal(w[2, 1:], torch.full((3,), 2.5))
    assert torch.equal(w[1, 1:], torch.ones(3))
    w = SteerPlugin(cot_weight=3.0).token_weights(ctx).weight
    assert torch.equal(w[:, 0], torch.ones(3)) and float(w.sum()) == 3 + 3 * 3 * 2 + 3
    w = SteerPlugin(route_weight=0.0).token_weights(ctx).weight  # the diagnostic: the route token leaves the loss
    assert torch.equal(w[:, 0], torch.zeros(3)) and torch.equal(w[:, 1:], torch.ones(3, 3))


def _route_grads(route_detach: bool, adv_rows: str) -> tuple[float, dict[str, torch.Tensor], torch.Tensor, object]:
    """A micro policy, two scenes with <think> forced on two rollouts and <direct> on two; advantages only on the
    route token (``adv_rows="route"``) or only on the content; returns the loss, the gradients, the detached
    route log-probs and the batch."""
    from compute.core.lm.model import LMConfig, TinyLM
    from compute.core.rl.plugins import RolloutSpec
    from compute.core.rl.trainer import GRPOConfig, GRPOTrainer
    from compute.core.tasks.base import split_rng
    from compute.steer.plugin import SteerPlugin, detached_route_logp
    from compute.steer.task import DrivingTask

    torch.manual_seed(0)
    task = DrivingTask(cot="rel", scenes="v2")
    tok = task.tokenizer
    model = TinyLM(LMConfig.sized("micro", tok.vocab_size, max_len=512))
    cfg = GRPOConfig(max_new=6, n_eval=1, seed=0)
    plug = SteerPlugin("steer", route_weight=4.0, route_detach=route_detach)
    tr = GRPOTrainer(model, task, cfg, [plug])
    probs = task.sample(2, split_rng(3, "train"), "train")
    specs = [
        RolloutSpec(task.prompt(p), 2, p, i, force_prefix=[tok.stoi[r]])
        for i, p in enumerate(probs)
        for r in (THINK, DIRECT)
    ]
    batch = tr._generate(specs, 0)
    n, R = batch.response.shape
    adv = torch.zeros(n, R)
    if adv_rows == "route":
        adv[:, 0] = torch.linspace(-0.5, 1.0, n)
    else:
        adv[:, 1:] = torch.linspace(-0.5, 1.0, n)[:, None]
    batch.adv = adv * batch.response_mask
    tr.recompute_old(batch)
    tr.model.zero_grad(set_to_none=True)
    loss, _ = tr.minibatch_loss(batch, backward=True)
    grads = {k: (p.grad.clone() if p.grad is not None else torch.zeros_like(p)) for k, p in model.named_parameters()}
    with torch.no_grad():
        lp = detached_route_logp(model, batch.prompt, batch.prompt_mask, batch.response[:, 0], cfg.temperature)
    return float(loss), grads, lp, batch


def test_detached_route_moves_only_the_output_rows_and_keeps_the_loss() -> None:
    """``route_detach``: the same loss value and the same route log-probs; a route-only advantage leaves every
    trunk parameter without gradient (the attached route token moves them) and moves the <think> / <direct>
    output rows most; a content-only advantage gives exactly the attached gradients."""
    tok = make_tokenizer()
    think, direct = tok.stoi[THINK], tok.stoi[DIRECT]
    loss_a, g_a, lp, batch = _route_grads(False, "route")
    loss_d, g_d, _, _ = _route_grads(True, "route")
    assert loss_d == pytest.approx(loss_a, abs=1e-6) and loss_a != 0.0
    assert torch.allclose(lp, batch.old_logp[:, 0], atol=1e-5)  # the detached features give the sampled log-probs
    trunk = [k for k in g_a if k != "emb.weight"]
    assert all(float(g_d[k].abs().max()) == 0.0 for k in trunk)
    assert sum(float(g_a[k].abs().sum()) for k in trunk) > 0
    rows = g_d["emb.weight"].norm(dim=1)
    assert float(rows.max()) > 0 and set(torch.topk(rows, 2).indices.tolist()) == {think, direct}
    loss_a, g_a, _, _ = _route_grads(False, "content")
    loss_d, g_d, _, _ = _route_grads(True, "content")
    assert loss_d == pytest.approx(loss_a, abs=1e-7)
    assert all(torch.allclose(g_a[k], g_d[k], atol=1e-8) for k in g_a)


def test_route_head_starts_at_the_router_and_alone_takes_the_route_term() -> None:
    """A zero route head leaves p_c as the first-token router's and is not one of the LM's parameters; the binary
    log p(route) it trains equals log p_c / log(1 − p_c) of ``route_probs``; a route-only advantage gives no LM
    parameter a gradient, and the head's bias the closed form −ω/Σmask · Σᵢ Âᵢ (1[routeᵢ = <think>] − p_c,ᵢ)."""
    from compute.core.lm.model import LMConfig, TinyLM
    from compute.core.rl.plugins import RolloutSpec
    from compute.core.rl.trainer import GRPOConfig, GRPOTrainer
    from compute.core.tasks.base import split_rng
    from compute.steer.evaluate import attach_route_head, route_probs
    from compute.steer.plugin import SteerPlugin, head_route_logp
    from compute.steer.run import new_route_head
    from compute.steer.task import DrivingTask

    torch.manual_seed(0)
    task = DrivingTask(cot="rel", scenes="v2")
    tok = task.tokenizer
    think, direct = tok.stoi[THINK], tok.stoi[DIRECT]
    model = TinyLM(LMConfig.sized("micro", tok.vocab_size, max_len=512))
    probs = task.sample(2, split_rng(3, "train"), "train")
    prompts = [task.prompt(p) for p in probs]
    pc0, _ = route_probs(model, prompts, think, direct)
    keys = set(model.state_dict())
    n_params = len(list(model.parameters()))
    attach_route_head(model, new_route_head(model, task, seed=0, n=16))
    assert set(model.state_dict()) == keys and len(list(model.parameters())) == n_params
    pc1, _ = route_probs(model, prompts, think, direct)
    assert np.allclose(pc0, pc1, atol=1e-6)

    cfg = GRPOConfig(max_new=6, n_eval=1, seed=0)
    tr = GRPOTrainer(model, task, cfg, [SteerPlugin("steer", route_weight=4.0)])
    specs = [
        RolloutSpec(prm, 2, p, i, force_prefix=[tok.stoi[r]])
        for i, (prm, p) in enumerate(zip(prompts, probs, strict=True))
        for r in (THINK, DIRECT)
    ]
    batch = tr._generate(specs, 0)
    n, R = batch.response.shape
    adv = torch.zeros(n, R)
    adv[:, 0] = torch.linspace(-0.5, 1.0, n)
    batch.adv = adv * batch.response_mask
    tr.recompute_old(batch)
    route = batch.response[:, 0]
    with torch.no_grad():
        lp = head_route_logp(model, batch.prompt, batch.prompt_mask, route, think, direct)
    pc_rows = torch.tensor(np.repeat(pc1, 4), dtype=torch.float32)
    is_think = (route == think).float()
    assert torch.allclose(lp.exp(), torch.where(route == think, pc_rows, 1 - pc_rows), atol=1e-5)
    head = model.route_head
    model.zero_grad(set_to_none=True)
    head.zero_grad(set_to_none=True)
    tr.minibatch_loss(batch, backward=True)
    assert all(p.grad is None or float(p.grad.abs().max()) == 0.0 for p in model.parameters())
    want = -4.0 / float(batch.response_mask.sum()) * float((adv[:, 0] * (is_think - pc_rows)).sum())
    assert float(head.c.grad) == pytest.approx(want, rel=1e-4) and want != 0.0
    assert float(head.u.grad.abs().sum()) > 0


@pytest.mark.parametrize(
    "method,rollout", [("length_penalty", "uncertainty"), ("grpo", "uncertainty"), ("steer", "on_policy")]
)
def test_sampled_route_methods_draw_from_the_route_heads_belief(monkeypatch, method: str, rollout: str) -> None:
    """With a route head, the methods that sample their route draw n_c ~ Binomial(G, p_c) from the head-adjusted
    p_c and force it (p_c = 0 and 1 give 0 and G; over many scenes the mean n_c is G·p_c, and q_c is p_c); without a
    head the LM samples its route token (one unforced spec of G rollouts).  The quota method is unaffected."""
    from types import SimpleNamespace

    from compute.core.rl.plugins import RolloutSpec
    from compute.steer import plugin as pl

    tok = make_tokenizer()
    think, direct = tok.stoi[THINK], tok.stoi[DIRECT]
    p = np.array([0.0, 1.0] + [0.3] * 2000)
    monkeypatch.setattr(pl, "route_probs", lambda model, prompts, *a: (p[: len(prompts)], None))
    st = SimpleNamespace(
        phase=0,
        task=SimpleNamespace(tokenizer=tok),
        model=SimpleNamespace(),
        cfg=SimpleNamespace(temperature=1.0, seed=3),
        extra={},
    )
    prob = SimpleNamespace(data={"tier": "easy"})
    specs = [RolloutSpec([1], 8, prob, k) for k in range(len(p))]
    plain = pl.SteerPlugin(method, rollout=rollout).plan_rollouts(specs[:3], st)
    assert [(s.n, s.force_prefix) for s in plain] == [(8, None)] * 3

    monkeypatch.setattr(pl, "route_head", lambda model: object())
    out = pl.SteerPlugin(method, rollout=rollout).plan_rollouts(specs, st)
    n_c = np.zeros(len(p))
    for s in out:
        assert s.force_prefix in ([think], [direct]) and s.meta["q_c"] == pytest.approx(p[s.group_key])
        if s.force_prefix == [think]:
            n_c[s.group_key] += s.n
    assert sum(s.n for s in out) == 8 * len(p)
    assert n_c[0] == 0 and n_c[1] == 8
    assert abs(n_c[2:].mean() - 8 * 0.3) < 4 * np.sqrt(8 * 0.3 * 0.7 / 2000)
    assert n_c[2:].std() == pytest.approx(np.sqrt(8 * 0.3 * 0.7), rel=0.1)  # binomial spread, not a rounded quota
    quota = pl.SteerPlugin("steer").plan_rollouts(specs[:3], st)
    assert [(s.n, s.force_prefix) for s in quota] == [(8, [direct]), (8, [think]), (4, [think]), (4, [direct])]

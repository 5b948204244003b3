"""STEER's two components and the baselines as one routing plug-in on the GRPO core (spec steer §2).

**Router belief.** p_c = π_old(<think> | scene) / (π_old(<think>) + π_old(<direct>)) from the prefill's first-token
distribution (the sampling weights, before the update); uncertainty u = h₂(p_c) ∈ [0, 1] bits.

**(i) Uncertainty-aware rollout quota** (``quota``): for G rollouts, m = min(⌈β·G·u⌉, ⌊G/2⌋) (optionally ≥ m_min),
n_c = clamp(round(G·p_c), m, G − m); n_c rollouts get <think> forced through ``force_prefix``, the rest <direct>.
Ablations: ``on_policy`` (the route token is sampled) and ``fixed_half`` (n_c = G/2).

**(ii) Differential metric and cross-route credit** (``steer_advantages``): per scene with both routes sampled,
Δ = μ_cot − μ_dir − λ·(c̄_cot − c̄_dir) (mean score and mean generated tokens of each route); σ_Δ is a running
RMS of Δ (EMA 0.99, initial 0.1, design: uncentred so a consistent sign is kept); the route token gets
Â = +clip(Δ/σ_Δ, ±5) on CoT samples and −clip(Δ/σ_Δ, ±5) on direct samples (0 when one route only); content
tokens get within-route GRPO advantages (r_i − μ_route)/(σ_route + 1e-6) (Bessel σ, as the core).  First-order
effect on the route log-odds: Â·[n_c(1 − p_c) + n_d·p_c], whose sign is sign(Δ) for any quota
(``route_logit_gradient``).  Option ``route_is``: the route term × clip(π_old(route)/q(route), 0.2, 5), q the
quota share.

**Baselines** (the same plug-in, ``method``):

* ``always_cot`` / ``never_cot``: the route forced for all G rollouts; plain GRPO on the content, route token 0;
* ``grpo``: implicit adaptation — the route is sampled, plain GRPO over both routes on the score;
* ``length_penalty``: as ``grpo`` with r′ = r − λ·tokens;
* ``adathink``: AdaThinkDrive-style approximation — G/2 forced per mode, ±``bonus`` to a sample whose mode's
  group mean beats (trails) the other mode's, then plain GRPO over the group;
* ``label_router``: the upper reference that reads the hidden tier — the route forced to the label (<think> on
  ``oracle_tiers``), the route token pushed toward it with Â = +1, content by within-route GRPO.

``route_weight`` (design, default 1 = neutral, same for every method): ω on the route token in the token-mean
loss.  Under token-mean aggregation the one route token of a ~20-token response gets 1/Σmask of the loss like any
content token; ω > 1 speeds up route learning without changing its direction.  ω = 0 takes the route token out of
the loss (a diagnostic: the route stays at SFT's).

``route_detach`` (design, default off; not in the paper): the route token's term of the loss (the same clipped
surrogate, advantage and ω) is computed from the trunk's final features at the route position with the gradient
stopped (``detached_route_logp``), so the route's updates reach only the tied output rows, mostly those of
<think> and <direct>, and never the layers the plans are computed with.  The forward values (p_c, ratios, the loss)
are unchanged; only where the route's gradient goes differs.

``route_head_lr`` (config; design, default 0 = off; not in the paper): a separate route readout (``RouteHead``: an
offset on the route log-odds from centred final features) stepped by its own Adam at this learning rate; the route
term then trains only the head (the tied rows and the trunk get none of it), as ``route_detach`` does, but at a
rate of its own: the offline readout fit separated the tiers only at 20–200× the RL learning rate.  With a head, the
methods that sample their route (``grpo``, ``length_penalty``, STEER ``on_policy``) draw each rollout's route from
the head-adjusted p_c (n_c ~ Binomial(G, p_c)) and force it, so every method reads its route through the same head and
the comparison is one of rollout and credit only; without a head the LM samples its route token as before.

``cot_weight`` (design, default 1 = neutral): κ on the content tokens (trace and plan, every position after the
route token) of the rows that took <think>, every method alike.  STEER spends most late updates on the direct route
(CoT is ~30 % of its samples once it routes), so the trace-conditioned plans get a smaller share of each Adam step
than under always-CoT; κ > 1 gives them back a larger share without changing any advantage's sign.

``cot_aux`` (design, default 0 = off; not in the paper): k extra rollouts per scene with <think> forced, in a group
of their own (``AUX`` in the group key), every method but the forced-route baselines.  Their route token gets no
advantage (a one-route group) and never enters Δ, σ_Δ or the route statistics; their content gets within-group GRPO.
So the trace-conditioned plans train on every scene, as under always-CoT, while the route and its credit are
unchanged (the route audits put STEER's gap to always-CoT in those plans).  It costs k/G more training rollouts,
nothing at inference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from compute.core.lm.model import positions_from_valid
from compute.core.rl.loss import policy_loss
from compute.core.rl.plugins import LossContext, Plugin, RolloutSpec, TokenWeights
from compute.steer.evaluate import h2, route_head, route_probs
from compute.steer.scenes import TIERS
from compute.steer.traces import DIRECT, THINK

METHODS = ("steer", "always_cot", "never_cot", "grpo", "length_penalty", "adathink", "label_router")
ROLLOUT_MODES = ("uncertainty", "on_policy", "fixed_half")
AUX = "cot_aux"  # marks the auxiliary forced-CoT group of a scene (group key and meta)


def quota(p_c: float, G: int, beta: float = 0.5, m_min: int = 0, mode: str = "uncertainty") -> tuple[int, int]:
    """(m, n_c): the per-route minimum and the number of forced-CoT rollouts out of G."""
    if mode == "fixed_half":
        return G // 2, G // 2
    u = float(h2(p_c))
    m = min(math.ceil(beta * G * u - 1e-12), G // 2)
    m = max(m, min(m_min, G // 2))
    n_c = int(min(max(round(G * p_c), m), G - m))
    return m, n_c


def route_logit_gradient(adv_route: np.ndarray, is_cot: np.ndarray, p_c: float) -> float:
    """d/dz Σ_i Â_i log π(route_i) for the route log-odds z (π(think) = σ(z)): Σ_cot Â(1 − p_c) − Σ_dir Â·p_c."""
    adv_route, is_cot = np.asarray(adv_route, dtype=float), np.asarray(is_cot, dtype=bool)
    return float(np.sum(adv_route[is_cot]) * (1 - p_c) - np.sum(adv_route[~is_cot]) * p_c)


def within_route_advantages(rewards: np.ndarray) -> np.ndarray:
    """GRPO inside one route group: (r − μ)/(σ + 1e-6), Bessel σ; a single sample gets 0."""
    r = np.asarray(rewards, dtype=float)
    if len(r) < 2:
        return np.zeros_like(r)
    return (r - r.mean()) / (r.std(ddof=1) + 1e-6)


@dataclass
class RouteCredit:
    """Route-token advantages of one scene's rollouts (``steer_advantages`` per group)."""

    route_adv: np.ndarray  # [n]
    content_adv: np.ndarray  # [n]
    delta: float | None  # None when only one route was sampled


def steer_advantages(
    rewards: np.ndarray, costs: np.ndarray, is_cot: np.ndarray, lam: float, sigma: float, clip: float = 5.0
) -> RouteCredit:
    """Cross-route credit for one scene given σ_Δ (see module docstring)."""
    rewards, costs = np.asarray(rewards, dtype=float), np.asarray(costs, dtype=float)
    is_cot = np.asarray(is_cot, dtype=bool)
    content = np.zeros(len(rewards))
    for sel in (is_cot, ~is_cot):
        if sel.any():
            content[sel] = within_route_advantages(rewards[sel])
    if is_cot.all() or (~is_cot).all():
        return RouteCredit(np.zeros(len(rewards)), content, None)
    delta = rewards[is_cot].mean() - rewards[~is_cot].mean() - lam * (costs[is_cot].mean() - costs[~is_cot].mean())
    a = float(np.clip(delta / max(sigma, 1e-12), -clip, clip))
    return RouteCredit(np.where(is_cot, a, -a), content, float(delta))


@torch.no_grad()
def route_features(model: Any, prompt: torch.Tensor, prompt_mask: torch.Tensor) -> list[torch.Tensor]:
    """Without gradient, at the last prompt position (where the route token is read; prompts are left-padded): each
    block's output, then the final normed features the output embedding reads, each [N, d]."""
    valid = prompt_mask.bool()
    _, hidden = model(prompt, positions_from_valid(valid), valid, return_hidden=True)
    return [h[:, -1] for h in hidden] + [model.ln_f(hidden[-1][:, -1])]


def detached_route_logp(
    model: Any, prompt: torch.Tensor, prompt_mask: torch.Tensor, route: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """log π(route | scene) [N] from the final normed features computed without gradient (``route_features``): its
    gradient reaches only the tied output embedding."""
    feats = route_features(model, prompt, prompt_mask)[-1]
    t = temperature if temperature > 0 else 1.0
    lp = F.log_softmax((feats @ model.emb.weight.T).float() / t, dim=-1)
    return lp.gather(-1, route[:, None]).squeeze(-1)


def head_route_logp(
    model: Any,
    prompt: torch.Tensor,
    prompt_mask: torch.Tensor,
    route: torch.Tensor,
    think_id: int,
    direct_id: int,
    temperature: float = 1.0,
) -> torch.Tensor:
    """log p(route | scene) [N] under the binary router with the route head (``RouteHead``): p_c = σ(ℓ), ℓ the
    first-token log-odds of <think> against <direct> on features and output rows without gradient plus the head's
    offset, so the gradient reaches only the head."""
    feats = route_features(model, prompt, prompt_mask)[-1]
    w = model.emb.weight.detach()
    t = temperature if temperature > 0 else 1.0
    ell = (feats @ (w[think_id] - w[direct_id])).float() / t + route_head(model)(feats)
    return F.logsigmoid(torch.where(route == think_id, ell, -ell))


class RunningRMS:
    """σ_Δ: sqrt of an EMA of Δ² (decay 0.99, initial value σ₀)."""

    def __init__(self, init: float = 0.1, decay: float = 0.99) -> None:
        self.ms = init * init
        self.decay = decay

    def update(self, x: float) -> None:
        self.ms = self.decay * self.ms + (1 - self.decay) * x * x

    @property
    def value(self) -> float:
        return math.sqrt(self.ms)


class SteerPlugin(Plugin):
    """Routing plug-in: ``method`` selects STEER or a baseline (module docstring)."""

    name = "steer"
    extra_tokens = (THINK, DIRECT)

    def __init__(
        self,
        method: str = "steer",
        lam: float = 1e-3,
        beta: float = 0.5,
        rollout: str = "uncertainty",
        m_min: int = 0,
        route_is: bool = False,
        sigma0: float = 0.1,
        sigma_decay: float = 0.99,
        adv_clip: float = 5.0,
        bonus: float = 0.1,
        oracle_tiers: tuple[str, ...] = ("hard",),
        route_weight: float = 1.0,
        cot_weight: float = 1.0,
        cot_aux: int = 0,
        route_detach: bool = False,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}")
        if rollout not in ROLLOUT_MODES:
            raise ValueError(f"rollout must be one of {ROLLOUT_MODES}")
        self.method, self.lam, self.beta, self.rollout, self.m_min = method, lam, beta, rollout, m_min
        self.route_is, self.adv_clip, self.bonus, self.oracle_tiers = route_is, adv_clip, bonus, tuple(oracle_tiers)
        self.route_weight = route_weight  # ω on the route token (position 0) in the token-mean loss; 1 = neutral
        self.cot_weight = cot_weight  # κ on the content tokens of <think> rows; 1 = neutral
        self.route_detach = route_detach  # the route term from stop-gradient trunk features (extra_loss)
        self.cot_aux = cot_aux if method not in ("always_cot", "never_cot") else 0  # extra forced-CoT rollouts
        self.sigma = RunningRMS(sigma0, sigma_decay)
        self._rng: np.random.Generator | None = None  # samples routes from a route head's p_c (_route_rng)
        self.step_stats: dict[str, float] = {}
        self.scatter: list[tuple[float, float, str]] = []  # (p_c, Δ, tier) of two-route scenes, last steps

    # ---------------------------------------------------------------- (i) rollouts
    def plan_rollouts(self, specs: list[RolloutSpec], state: Any) -> list[RolloutSpec]:
        if state.phase != 0:
            return []
        tok = state.task.tokenizer
        think, direct = tok.stoi[THINK], tok.stoi[DIRECT]
        pc, _ = route_probs(state.model, [s.prompt for s in specs], think, direct, state.cfg.temperature)
        out: list[RolloutSpec] = []
        quotas = []
        metas = [
            {"p_c": float(p), "u": float(h2(p)), "tier": s.problem.data["tier"]} for s, p in zip(specs, pc, strict=True)
        ]
        for s, p, meta in zip(specs, pc, metas, strict=True):
            G = s.n
            sampled = self.method in ("grpo", "length_penalty") or (
                self.method == "steer" and self.rollout == "on_policy"
            )
            if sampled and route_head(state.model) is None:
                out.append(RolloutSpec(s.prompt, G, s.problem, s.group_key, s.role, None, {**meta, "q_c": p}))
                continue
            if sampled:  # the route head's p_c is the route policy: sample each route from it, then force it
                n_c = int(self._route_rng(state).binomial(G, float(p)))
            elif self.method == "always_cot":
                n_c = G
            elif self.method == "never_cot":
                n_c = 0
            elif self.method == "adathink":
                n_c = G // 2
            elif self.method == "label_router":
                n_c = G if s.problem.data["tier"] in self.oracle_tiers else 0
            else:
                m, n_c = quota(float(p), G, self.beta, self.m_min, self.rollout)
                quotas.append((meta["u"], m, n_c / G))
            q_c = float(p) if sampled else n_c / G
            for route, n in ((think, n_c), (direct, G - n_c)):
                if n > 0:
                    out.append(RolloutSpec(s.prompt, n, s.problem, s.group_key, s.role, [route], {**meta, "q_c": q_c}))
        if self.cot_aux > 0:
            for s, meta in zip(specs, metas, strict=True):
                aux_meta = {**meta, "q_c": 1.0, AUX: True}
                out.append(
                    RolloutSpec(s.prompt, self.cot_aux, s.problem, (s.group_key, AUX), s.role, [think], aux_meta)
                )
        st = {"route/pc_mean": float(np.mean(pc)), "route/entropy_bits": float(np.mean(h2(pc)))}
        tiers = [s.problem.data["tier"] for s in specs]
        for t in TIERS:
            sel = [p for p, tt in zip(pc, tiers, strict=True) if tt == t]
            if sel:
                st[f"route/pc_{t}"] = float(np.mean(sel))
        if quotas:
            q = np.array(quotas)
            st.update({"quota/u": float(q[:, 0].mean()), "quota/m": float(q[:, 1].mean())})
            st["quota/cot_share"] = float(q[:, 2].mean())
            state.extra["quota_points"] = q
        self.step_stats = st
        return out

    def _route_rng(self, state: Any) -> np.random.Generator:
        """The generator that samples routes from the route head's p_c (sampled-route methods with a head)."""
        if self._rng is None:
            self._rng = np.random.default_rng([int(state.cfg.seed), 0x57EE])
        return self._rng

    # ---------------------------------------------------------------- rewards
    def assign_rewards(self, batch: Any, rewards: torch.Tensor, state: Any) -> torch.Tensor:
        think = state.task.tokenizer.stoi[THINK]
        is_cot = (batch.response[:, 0] == think).cpu().numpy()
        cost = batch.lengths.float().cpu().numpy()
        r = rewards.detach().cpu().numpy().astype(float)
        state.extra["score"] = r.copy()
        state.extra["cost"] = cost
        state.extra["is_cot"] = is_cot
        if self.method == "length_penalty":
            r = r - self.lam * cost
        elif self.method == "adathink":
            groups = batch.groups.cpu().numpy()
            for g in np.unique(groups):
                sel = groups == g
                c, d = sel & is_cot, sel & ~is_cot
                if c.any() and d.any():
                    diff = r[c].mean() - r[d].mean()
                    b = self.bonus * np.sign(diff)
                    r[c] += b
                    r[d] -= b
        return torch.as_tensor(r, dtype=rewards.dtype, device=rewards.device)

    # ---------------------------------------------------------------- (ii) advantages
    def advantages(self, batch: Any, adv: torch.Tensor, state: Any) -> torch.Tensor:
        score, cost, is_cot = state.extra["score"], state.extra["cost"], state.extra["is_cot"]
        groups = batch.groups.cpu().numpy()
        mask = batch.response_mask
        st = self.step_stats
        aux = np.array([bool(sp.meta.get(AUX)) for sp in batch.specs])
        two, deltas, scat = 0, [], []
        if self.method in ("grpo", "length_penalty", "adathink"):
            out = adv  # plain GRPO over the whole group (route token included)
            if aux.any():
                out = out.clone()
                out[torch.as_tensor(aux, device=out.device), 0] = 0.0  # forced auxiliary route tokens get no credit
        else:
            route_a = np.zeros(len(score))
            content_a = np.zeros(len(score))
            for g in np.unique(groups):
                idx = np.flatnonzero(groups == g)
                rc = steer_advantages(score[idx], cost[idx], is_cot[idx], self.lam, self.sigma.value, self.adv_clip)
                content_a[idx] = rc.content_adv
                if self.method in ("steer",) and rc.delta is not None:
                    self.sigma.update(rc.delta)
                    rc = steer_advantages(score[idx], cost[idx], is_cot[idx], self.lam, self.sigma.value, self.adv_clip)
                    route_a[idx] = rc.route_adv
                    two += 1
                    deltas.append(rc.delta)
                    meta = batch.specs[idx[0]].meta
                    scat.append((meta["p_c"], rc.delta, meta["tier"]))
                if self.method == "label_router" and not aux[idx[0]]:
                    route_a[idx] = 1.0
            if self.method == "steer" and self.route_is:
                for i in range(len(score)):
                    meta = batch.specs[i].meta
                    p_route = meta["p_c"] if is_cot[i] else 1 - meta["p_c"]
                    q_route = meta["q_c"] if is_cot[i] else 1 - meta["q_c"]
                    route_a[i] *= float(np.clip(p_route / max(q_route, 1e-6), 0.2, 5.0))
            out = torch.as_tensor(content_a, dtype=adv.dtype, device=adv.device)[:, None] * mask
            out[:, 0] = torch.as_tensor(route_a, dtype=adv.dtype, device=adv.device) * mask[:, 0]
        own = ~aux  # the route statistics describe the method's own rollouts, never the auxiliary ones
        score, cost, is_cot, groups = score[own], cost[own], is_cot[own], groups[own]
        n_groups = len(np.unique(groups))
        if self.method not in ("steer",):
            two = sum(1 for g in np.unique(groups) if len(np.unique(is_cot[groups == g])) == 2)
        st["route/two_route_groups"] = two / max(1, n_groups)
        st["route/cot_rollouts"] = float(is_cot.mean())
        if aux.any():
            st["aux/score"] = float(state.extra["score"][aux].mean())
        if deltas:
            st["delta/mean"] = float(np.mean(deltas))
            for t in TIERS:
                dt = [d for _, d, tt in scat if tt == t]
                if dt:
                    st[f"delta/{t}"] = float(np.mean(dt))
        st["delta/sigma"] = self.sigma.value
        st["tokens/per_scene"] = float(cost.mean())
        tiers = [s.meta["tier"] for s, o in zip(batch.specs, own, strict=True) if o]
        for t in TIERS:
            sel = np.array([tt == t for tt in tiers])
            if sel.any():
                st[f"train/score_{t}"] = float(score[sel].mean())
                st[f"train/cot_{t}"] = float(is_cot[sel].mean())
        st["train/score"] = float(score.mean())
        self.scatter = (self.scatter + scat)[-400:]
        return out

    def token_weights(self, ctx: LossContext) -> TokenWeights | None:
        own_route_term = self.route_detach or route_head(ctx.state.model) is not None
        if self.route_weight == 1.0 and self.cot_weight == 1.0 and not own_route_term:
            return None
        w = torch.ones_like(ctx.mask)
        if self.cot_weight != 1.0:
            think = ctx.state.task.tokenizer.stoi[THINK]
            w[ctx.batch.response[:, 0] == think, 1:] = self.cot_weight
        w[:, 0] = 0.0 if own_route_term else self.route_weight  # detached / head: the route term is in extra_loss
        return TokenWeights(weight=w)

    def extra_loss(self, ctx: LossContext) -> torch.Tensor | None:
        """With ``route_detach``: ω × the route token's clipped surrogate on stop-gradient trunk features, over the
        same token-mean denominator as the main loss (the trainer runs steer without micro-batches).  With a route
        head: the same term on the binary router's log p(route) (``head_route_logp``), whose gradient reaches only
        the head; its old log-prob is the current one (one update per batch: ``ppo_epochs`` 1, checked by the
        trainer), so the ratio is 1 and the term is −ω·Â·log p(route) / Σmask."""
        model, cfg, route = ctx.state.model, ctx.state.cfg, ctx.batch.response[:, 0]
        if route_head(model) is not None:
            tok = ctx.state.task.tokenizer
            lp = head_route_logp(
                model,
                ctx.batch.prompt,
                ctx.batch.prompt_mask,
                route,
                tok.stoi[THINK],
                tok.stoi[DIRECT],
                cfg.temperature,
            )
            old = lp.detach()[:, None]
        elif self.route_detach:
            lp = detached_route_logp(model, ctx.batch.prompt, ctx.batch.prompt_mask, route, cfg.temperature)
            old = ctx.old_logp[:, :1]
        else:
            return None
        loss, _, _ = policy_loss(
            lp[:, None],
            old,
            ctx.adv[:, :1],
            ctx.mask[:, :1],
            None,
            cfg.eps_low,
            cfg.eps_high,
            cfg.dual_clip,
            "token-mean",
            None,
            ctx.mask.sum(),
        )
        return self.route_weight * loss

    def on_step_end(self, stats: dict[str, float], state: Any) -> dict[str, float] | None:
        return dict(self.step_stats)

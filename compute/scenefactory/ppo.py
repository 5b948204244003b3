"""PPO with one actor-critic shared by all agents (RSL-RL-like defaults; spec §2 "PPO").

Late fusion as in SceneFactory's ``scene_factory_late_fusion_actor_critic.py``: an ego MLP plus max-pooled encoders of
road points and neighbours.  Gaussian policy on u, action a = tanh(u) (the tanh Jacobian cancels in the PPO ratio).

    δ_t = r_t + γ V(s_{t+1})(1 − d_t) − V(s_t),   Â_t = δ_t + γλ(1 − d_t) Â_{t+1}
    L = −E[min(ρÂ, clip(ρ, 1 ± ε)Â)] + c_v (V − R)² − c_e H,  lr adapted to KL target 0.01.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from .env import VecDriveEnv
from .obs import EGO_DIM, NBR_DIM, ROAD_DIM, TOKEN_DIM


@dataclass
class PPOConfig:
    iterations: int = 150
    steps: int = 32  # rollout length per iteration
    epochs: int = 5
    minibatches: int = 4
    clip: float = 0.2
    gamma: float = 0.99
    lam: float = 0.95
    lr: float = 1e-3
    kl_target: float = 0.01
    value_coef: float = 1.0
    entropy_coef: float = 0.003
    max_grad_norm: float = 1.0
    hidden: int = 64
    init_log_std: float = -0.7


class LateFusionActorCritic(nn.Module):
    """Ego MLP + max-pooled road/neighbour encoders → shared trunk → Gaussian actor head and value head."""

    def __init__(self, hidden: int = 128, enc: int = 32, init_log_std: float = -0.7) -> None:
        super().__init__()
        self.road = nn.Sequential(nn.Linear(ROAD_DIM, enc), nn.ReLU(), nn.Linear(enc, enc))
        self.nbr = nn.Sequential(nn.Linear(NBR_DIM, enc), nn.ReLU(), nn.Linear(enc, enc))
        self.ego = nn.Sequential(nn.Linear(EGO_DIM + TOKEN_DIM, enc * 2), nn.ELU())
        d = enc * 4
        self.actor = nn.Sequential(
            nn.Linear(d, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU(), nn.Linear(hidden, 3)
        )
        self.critic = nn.Sequential(
            nn.Linear(d, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU(), nn.Linear(hidden, 1)
        )
        self.log_std = nn.Parameter(torch.full((3,), init_log_std))
        with torch.no_grad():
            self.actor[-1].weight.mul_(0.01)
            self.actor[-1].bias.zero_()

    def features(self, o: dict[str, torch.Tensor]) -> torch.Tensor:
        road = self.road(o["road"]).max(-2).values  # [N, enc]
        nb = self.nbr(o["nbr"]).masked_fill(~o["nbr_mask"][..., None], -1e4).max(-2).values
        nb = torch.where(o["nbr_mask"].any(-1, keepdim=True), nb, torch.zeros_like(nb))
        return torch.cat([self.ego(o["ego"]), road, nb], -1)

    def forward(self, o: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        f = self.features(o)
        return self.actor(f), self.critic(f).squeeze(-1)

    def dist(self, mean: torch.Tensor) -> torch.distributions.Normal:
        return torch.distributions.Normal(mean, self.log_std.exp().expand_as(mean))

    @torch.no_grad()
    def act(self, o: dict[str, torch.Tensor], deterministic: bool = False) -> torch.Tensor:
        mean = self.actor(self.features(o))
        return torch.tanh(mean if deterministic else self.dist(mean).sample())


class Adam:
    """Plain Adam (Kingma & Ba) with a settable lr.  Hand-written because ``torch.optim`` imports torch._dynamo on
    first use, which costs tens of seconds on a loaded 2-core machine."""

    def __init__(
        self, params: list[nn.Parameter], lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8
    ) -> None:
        self.params, self.lr, self.betas, self.eps, self.t = list(params), lr, betas, eps, 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v, strict=False):
            if p.grad is None:
                continue
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            p.addcdiv_(m / c1, (v / c2).sqrt_().add_(self.eps), value=-self.lr)


def clip_grad_norm(params: list[nn.Parameter], max_norm: float) -> float:
    """Scale gradients so their global L2 norm is at most ``max_norm``."""
    grads = [p.grad for p in params if p.grad is not None]
    total = torch.sqrt(sum((g**2).sum() for g in grads))
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(scale)
    return float(total)


def flat(o: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """[W, A, …] → [W·A, …]."""
    return {k: v.flatten(0, 1) for k, v in o.items()}


def gae(
    rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, last_value: torch.Tensor, gamma: float, lam: float
) -> torch.Tensor:
    """Generalised advantage estimation over [T, N] tensors (dones cut the bootstrap)."""
    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(last_value)
    for t in reversed(range(T)):
        nv = last_value if t == T - 1 else values[t + 1]
        nd = 1.0 - dones[t].float()
        delta = rewards[t] + gamma * nv * nd - values[t]
        last = delta + gamma * lam * nd * last
        adv[t] = last
    return adv


def train(
    env: VecDriveEnv,
    cfg: PPOConfig,
    model: LateFusionActorCritic | None = None,
    on_iter: Callable[[int, dict[str, float]], bool] | None = None,
) -> LateFusionActorCritic:
    """Run PPO; ``on_iter(i, stats)`` is called after each iteration (return True to stop early)."""
    from .metrics import summarize_episodes

    dev = env.device
    model = model or LateFusionActorCritic(cfg.hidden, init_log_std=cfg.init_log_std)
    model.to(dev)
    opt = Adam(list(model.parameters()), lr=cfg.lr)
    lr = cfg.lr
    o = flat(env.observe())
    for it in range(cfg.iterations):
        t_start = time.perf_counter()
        buf_o: list[dict[str, torch.Tensor]] = []
        u_s, lp_s, v_s, r_s, d_s, m_s = [], [], [], [], [], []
        spawned_steps = 0
        t_policy = 0.0
        for _ in range(cfg.steps):
            t0 = time.perf_counter()
            with torch.no_grad():
                mean, value = model(o)
                dist = model.dist(mean)
                u = dist.sample()
                logp = dist.log_prob(u).sum(-1)
            t_policy += time.perf_counter() - t0
            spawned_steps += env.n_spawned
            reward, done, info = env.step(torch.tanh(u).view(env.cfg.n_worlds, env.cfg.n_agents, 3))
            buf_o.append(o)
            u_s.append(u)
            lp_s.append(logp)
            v_s.append(value)
            r_s.append(reward.flatten())
            d_s.append(done.flatten())
            m_s.append(info["active"].flatten())
            o = flat(env.observe())
        t_env = time.perf_counter() - t_start
        with torch.no_grad():
            _, last_v = model(o)
        rewards, values, dones, masks = torch.stack(r_s), torch.stack(v_s), torch.stack(d_s), torch.stack(m_s)
        adv = gae(rewards, values, dones, last_v, cfg.gamma, cfg.lam)
        ret = adv + values
        obs_all = {k: torch.cat([b[k] for b in buf_o]) for k in buf_o[0]}
        u_all, lp_all = torch.cat(u_s), torch.cat(lp_s)
        adv_all, ret_all, val_all = adv.flatten(), ret.flatten(), values.flatten()
        valid = torch.nonzero(masks.flatten()).flatten()
        a_valid = adv_all[valid]
        adv_all = (adv_all - a_valid.mean()) / (a_valid.std() + 1e-8)
        kls, clipfracs, losses = [], [], []
        mb = max(1, valid.numel() // cfg.minibatches)
        for _ in range(cfg.epochs):
            perm = valid[torch.randperm(valid.numel(), device=dev)]
            for k in range(cfg.minibatches):
                idx = perm[k * mb : (k + 1) * mb]
                if idx.numel() == 0:
                    continue
                mean, value = model({kk: v[idx] for kk, v in obs_all.items()})
                dist = model.dist(mean)
                logp = dist.log_prob(u_all[idx]).sum(-1)
                log_ratio = logp - lp_all[idx]
                ratio = log_ratio.exp()
                a = adv_all[idx]
                pg = torch.max(-a * ratio, -a * torch.clamp(ratio, 1 - cfg.clip, 1 + cfg.clip)).mean()
                vclip = val_all[idx] + torch.clamp(value - val_all[idx], -cfg.clip, cfg.clip)
                v_loss = torch.max((value - ret_all[idx]) ** 2, (vclip - ret_all[idx]) ** 2).mean()
                ent = dist.entropy().sum(-1).mean()
                loss = pg + cfg.value_coef * v_loss - cfg.entropy_coef * ent
                opt.zero_grad()
                loss.backward()
                clip_grad_norm(opt.params, cfg.max_grad_norm)
                opt.step()
                with torch.no_grad():
                    kl = ((ratio - 1) - log_ratio).mean().item()
                    kls.append(kl)
                    clipfracs.append(((ratio - 1).abs() > cfg.clip).float().mean().item())
                    losses.append((pg.item(), v_loss.item()))
                # RSL-RL adaptive schedule
                if kl > 2 * cfg.kl_target:
                    lr = max(1e-5, lr / 1.5)
                elif kl < cfg.kl_target / 2:
                    lr = min(1e-2, lr * 1.5)
                opt.lr = lr
        ep = summarize_episodes(env.pop_finished())
        stats = {
            "reward_per_step": float(rewards[masks].mean()) if bool(masks.any()) else 0.0,
            "approx_kl": sum(kls) / max(len(kls), 1),
            "clipfrac": sum(clipfracs) / max(len(clipfracs), 1),
            "policy_loss": sum(x[0] for x in losses) / max(len(losses), 1),
            "value_loss": sum(x[1] for x in losses) / max(len(losses), 1),
            "lr": lr,
            "casps": spawned_steps / max(t_env, 1e-9),
            "policy_ms_per_step": 1000 * t_policy / cfg.steps,
            "iter_seconds": time.perf_counter() - t_start,
            "std": float(model.log_std.detach().exp().mean()),
        }
        stats.update({f"ep_{k}": v for k, v in ep.items()})
        if on_iter is not None and on_iter(it, stats):
            break
    return model


@torch.no_grad()
def evaluate(
    env: VecDriveEnv,
    model: LateFusionActorCritic,
    min_episodes: int = 256,
    max_steps: int = 2000,
    deterministic: bool = True,
) -> dict[str, torch.Tensor]:
    """Roll out the policy until ``min_episodes`` agent-episodes finished; return their raw records."""
    env.pop_finished()
    env.reset_worlds(torch.arange(env.cfg.n_worlds, device=env.device))
    model.eval()
    recs: list[dict[str, torch.Tensor]] = []
    n = 0
    for _ in range(max_steps):
        o = flat(env.observe())
        a = model.act(o, deterministic=deterministic)
        env.step(a.view(env.cfg.n_worlds, env.cfg.n_agents, 3))
        if env.finished:
            f = env.pop_finished()
            recs.append(f)
            n += int(f["success"].numel())
            if n >= min_episodes:
                break
    model.train()
    if not recs:
        return env.pop_finished()
    return {k: torch.cat([r[k] for r in recs]) for k in recs[0]}

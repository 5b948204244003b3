"""Recurrent PPO over limb tokens, with truncated BPTT over fixed-length chunks (design defaults, spec §2).

Rollout: S slots × T steps.  The per-limb hidden state is stored at every chunk start; inside a chunk it is reset
to zero at episode starts (``reset``).  Update: chunks of L steps are replayed from their stored state.

    GAE:      δ_t = r_t + γ V(s_{t+1}) (1 − d_t) − V(s_t),   Â_t = δ_t + γλ (1 − d_t) Â_{t+1}
    surrogate: L = −E[min(ρ Â, clip(ρ, 1 − ε, 1 + ε) Â)] + ½ c_v E[(V − R̂)²] − c_e H,   ρ = π_new / π_old

Log-probabilities and entropies sum over the actuated limbs only (torso and padding are masked).
Rewards are scaled per robot by the running std of its discounted return (spec: large robots must not dominate).
Truncation at ``episode_len`` is treated as termination (CleanRL convention; design).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from compute.modular_control.models import Policy


@dataclass(frozen=True)
class PPOConfig:
    steps_per_iter: int = 128  # T per slot
    bptt: int = 16  # chunk length L
    gamma: float = 0.99
    lam: float = 0.95
    clip: float = 0.2
    lr: float = 3e-4
    epochs: int = 2
    minibatches: int = 4
    max_grad_norm: float = 0.5
    vf_coef: float = 0.5
    ent_coef: float = 0.0


class ReturnNormalizer:
    """Per-robot running std of the discounted return (gym's NormalizeReward, one per robot index)."""

    def __init__(self, n: int, gamma: float) -> None:
        self.gamma = gamma
        self.count = np.full(n, 1e-4)
        self.mean = np.zeros(n)
        self.var = np.ones(n)

    def __call__(self, ret: np.ndarray, reward: np.ndarray, morph: np.ndarray, done: np.ndarray) -> np.ndarray:
        ret[:] = ret * self.gamma + reward
        for k in np.unique(morph):
            x = ret[morph == k]
            n, mu, var = len(x), x.mean(), x.var()
            tot = self.count[k] + n
            delta = mu - self.mean[k]
            self.var[k] = (self.var[k] * self.count[k] + var * n + delta**2 * self.count[k] * n / tot) / tot
            self.mean[k] += delta * n / tot
            self.count[k] = tot
        out = np.clip(reward / np.sqrt(self.var[morph] + 1e-8), -10, 10)
        ret[done] = 0.0
        return out


def gaussian_logp(a: torch.Tensor, mu: torch.Tensor, log_std: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
    """Σ over actuated limbs of log N(a; μ, σ²).  Shapes (..., N) → (...)."""
    lp = -0.5 * ((a - mu) / log_std.exp()) ** 2 - log_std - 0.5 * math.log(2 * math.pi)
    return (lp * act).sum(-1)


def gae(rew: np.ndarray, val: np.ndarray, done: np.ndarray, last_val: np.ndarray, gamma: float, lam: float):
    """Generalised advantage estimation over (T, S) arrays; ``done[t]`` = episode ended after step t."""
    T = len(rew)
    adv = np.zeros_like(rew)
    last = np.zeros(rew.shape[1])
    for t in reversed(range(T)):
        nxt = last_val if t == T - 1 else val[t + 1]
        nonterm = 1.0 - done[t]
        delta = rew[t] + gamma * nxt * nonterm - val[t]
        last = delta + gamma * lam * nonterm * last
        adv[t] = last
    return adv, adv + val


class Rollout:
    """Collects T steps from an env with the batched-env interface of ``envs.BatchEnv``."""

    def __init__(self, env: Any, policy: Policy, n_morphs: int, cfg: PPOConfig, seed: int = 0) -> None:
        self.env, self.policy, self.cfg = env, policy, cfg
        self.gen = torch.Generator().manual_seed(seed)
        self.cur = env.reset()
        S, N = env.n_slots, policy.cfg.n_max
        self.h = policy.initial_state(S)
        self.prev_a = np.zeros((S, N), dtype=np.float32)
        self.reset_flag = np.ones(S, dtype=bool)
        self.ret_norm = ReturnNormalizer(n_morphs, cfg.gamma)
        self.disc_ret = np.zeros(S)
        self.ep_ret = np.zeros(S)
        self.ep_len = np.zeros(S, dtype=int)
        self.finished: list[tuple[int, float, int]] = []  # (robot index, return, length)

    @torch.no_grad()
    def collect(self) -> dict[str, np.ndarray]:
        cfg, env, pol = self.cfg, self.env, self.policy
        T, L = cfg.steps_per_iter, cfg.bptt
        keys = ("obs", "ctx", "mask", "act_mask", "prev_a", "action", "logp", "value", "reward", "done", "reset")
        buf: dict[str, list] = {k: [] for k in keys}
        h_starts = []
        std = pol.log_std.exp()
        for t in range(T):
            if t % L == 0:
                h_starts.append(self.h.clone())
            cur = self.cur
            reset = torch.as_tensor(self.reset_flag)
            self.prev_a[self.reset_flag] = 0.0
            obs, ctx = torch.as_tensor(cur["obs"])[None], torch.as_tensor(cur["ctx"])[None]
            mask, act = torch.as_tensor(cur["mask"])[None], torch.as_tensor(cur["act_mask"])
            mu, v, self.h, _ = pol(obs, ctx, torch.as_tensor(self.prev_a)[None], mask, self.h, reset[None])
            mu = mu[0]
            a = (mu + std * torch.randn(mu.shape, generator=self.gen)) * act
            logp = gaussian_logp(a, mu, pol.log_std, act.float())
            out = env.step(a.numpy())
            for k, x in (
                ("obs", cur["obs"]),
                ("ctx", cur["ctx"]),
                ("mask", cur["mask"]),
                ("act_mask", cur["act_mask"]),
            ):
                buf[k].append(x)
            buf["prev_a"].append(self.prev_a.copy())
            buf["action"].append(a.numpy())
            buf["logp"].append(logp.numpy())
            buf["value"].append(v[0].numpy())
            buf["reset"].append(self.reset_flag.copy())
            r = out["reward"]
            self.ep_ret += r
            self.ep_len += 1
            buf["reward"].append(self.ret_norm(self.disc_ret, r, out["morph"], out["done"]))
            buf["done"].append(out["done"].astype(np.float32))
            for s in np.flatnonzero(out["done"]):
                self.finished.append((int(out["morph"][s]), float(self.ep_ret[s]), int(self.ep_len[s])))
                self.ep_ret[s], self.ep_len[s] = 0.0, 0
            self.prev_a = np.clip(a.numpy(), -1, 1).astype(np.float32)
            self.reset_flag = out["done"].copy()
            self.cur = out
        # bootstrap value of the state after the last step
        reset = torch.as_tensor(self.reset_flag)
        pa = np.where(self.reset_flag[:, None], 0.0, self.prev_a).astype(np.float32)
        _, v_last, _, _ = pol(
            torch.as_tensor(self.cur["obs"])[None],
            torch.as_tensor(self.cur["ctx"])[None],
            torch.as_tensor(pa)[None],
            torch.as_tensor(self.cur["mask"])[None],
            self.h,
            reset[None],
        )
        data = {k: np.stack(v) for k, v in buf.items()}
        adv, ret = gae(data["reward"], data["value"], data["done"], v_last[0].numpy(), cfg.gamma, cfg.lam)
        data["adv"], data["ret"] = adv.astype(np.float32), ret.astype(np.float32)
        data["h_starts"] = torch.stack(h_starts).numpy()  # (T/L, S, N, d)
        return data


def chunk_batches(data: dict[str, np.ndarray], L: int) -> dict[str, torch.Tensor]:
    """(T, S, ...) → (L, C, ...) with C = (T/L)·S chunks; chunk c = (k, s) covers steps kL..kL+L−1 of slot s."""
    out = {}
    for k, v in data.items():
        if k == "h_starts":
            out[k] = torch.as_tensor(v.reshape(v.shape[0] * v.shape[1], *v.shape[2:]))  # (K·S, N, d)
            continue
        T, S = v.shape[:2]
        K = T // L
        x = v.reshape(K, L, S, *v.shape[2:]).swapaxes(0, 1).reshape(L, K * S, *v.shape[2:])
        out[k] = torch.as_tensor(x)
    return out


def ppo_loss(policy: Policy, mb: dict[str, torch.Tensor], cfg: PPOConfig) -> tuple[torch.Tensor, dict[str, float]]:
    """Clipped PPO loss on a mini-batch of chunks (L, B, ...), replayed from the stored chunk-start states."""
    act = mb["act_mask"].float()
    mu, v, _, _ = policy(mb["obs"], mb["ctx"], mb["prev_a"], mb["mask"], mb["h_starts"], mb["reset"])
    logp = gaussian_logp(mb["action"], mu, policy.log_std, act)
    log_ratio = logp - mb["logp"]
    ratio = log_ratio.exp()
    adv = mb["adv"]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()
    v_loss = 0.5 * ((v - mb["ret"]) ** 2).mean()
    ent = (act.sum(-1) * (0.5 + 0.5 * math.log(2 * math.pi) + policy.log_std)).mean()
    loss = pg + cfg.vf_coef * v_loss - cfg.ent_coef * ent
    with torch.no_grad():
        stats = {
            "approx_kl": float(((ratio - 1) - log_ratio).mean()),
            "clipfrac": float(((ratio - 1).abs() > cfg.clip).float().mean()),
            "entropy": float(ent),
            "value_loss": float(v_loss),
            "policy_loss": float(pg),
        }
    return loss, stats


def update(
    policy: Policy, opt: torch.optim.Optimizer, data: dict[str, np.ndarray], cfg: PPOConfig, rng: np.random.Generator
):
    """``epochs`` passes over ``minibatches`` random groups of chunks; returns mean statistics."""
    ch = chunk_batches(data, cfg.bptt)
    C = ch["h_starts"].shape[0]
    stats: dict[str, list[float]] = {}
    for _ in range(cfg.epochs):
        perm = rng.permutation(C)
        for idx in np.array_split(perm, cfg.minibatches):
            idx_t = torch.as_tensor(idx)
            mb = {k: (v[idx_t] if k == "h_starts" else v[:, idx_t]) for k, v in ch.items()}
            loss, st = ppo_loss(policy, mb, cfg)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
            opt.step()
            for k, x in st.items():
                stats.setdefault(k, []).append(x)
    return {k: float(np.mean(v)) for k, v in stats.items()}


def train(
    env: Any,
    policy: Policy,
    n_morphs: int,
    total_steps: int,
    cfg: PPOConfig = PPOConfig(),
    seed: int = 0,
    callback: Callable[[int, dict[str, float], list[tuple[int, float, int]]], bool] | None = None,
) -> dict[str, float]:
    """Run PPO for ``total_steps`` environment steps (all slots together).

    ``callback(env_steps, stats, finished_episodes)`` after each iteration; returning True stops early.
    """
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr, eps=1e-5)
    rng = np.random.default_rng(seed)
    roll = Rollout(env, policy, n_morphs, cfg, seed)
    steps, t0, stats = 0, time.perf_counter(), {}
    n_iter = max(1, total_steps // (cfg.steps_per_iter * env.n_slots))
    for it in range(n_iter):
        ta = time.perf_counter()
        data = roll.collect()
        tb = time.perf_counter()
        frac = 1.0 - it / n_iter  # linear learning-rate annealing (CleanRL default)
        for g in opt.param_groups:
            g["lr"] = cfg.lr * frac
        stats = update(policy, opt, data, cfg, rng)
        tc = time.perf_counter()
        steps += cfg.steps_per_iter * env.n_slots
        n_samples = cfg.steps_per_iter * env.n_slots
        stats.update(
            {
                "rollout_sps": n_samples / (tb - ta),
                "update_sps": n_samples * cfg.epochs / (tc - tb),
                "sps": steps / (tc - t0),
                "log_std": float(policy.log_std.detach()),
            }
        )
        finished, roll.finished = roll.finished, []
        if callback is not None and callback(steps, stats, finished):
            break
    return stats

"""The top-two simulator as torch tensor code, for very large R on a GPU (same algorithm as ``simulator.simulate``).

Differences from the numpy path, all about execution rather than the method: no compaction (finished runs are
frozen by an ``active`` mask so the loop never synchronizes with the device except every ``check_every`` steps
to test whether all runs are done), torch's random stream, and only the top-two rules (EB-TCI / EB-TC with
randomized or tracking selection, optional forced exploration).  Used by the experiments when device = "cuda".
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import torch

from .simulator import Sampler

KL_EPS = 1e-12


def _neg_entropy(p: torch.Tensor) -> torch.Tensor:
    q = 1.0 - p
    return p * torch.log(p.clamp_min(KL_EPS)) + q * torch.log(q.clamp_min(KL_EPS))


def simulate_torch(
    mu: list[float] | np.ndarray,
    sampler: Sampler,
    deltas: list[float] | np.ndarray,
    n_runs: int,
    seed: int,
    device: str = "cpu",
    threshold_kind: str = "heuristic",
    t_max: int = 1_000_000,
    check_every: int = 64,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, np.ndarray | float | int]:
    """R runs of a top-two sampler with GLR stopping on a δ grid; returns τ (R, D), recommendations, correctness.

    Same rules as ``simulator.simulate``: W(B, j) in the negative-entropy form, TCI index W + log N_j,
    leader with probability β (randomized) or iff N^lead_B ≤ β·L_B (tracking), forced pull of argmin N when
    min N < √(t/K), stop for δ at the first t with Z_t > c(t, δ).  Every ``check_every`` steps (the only host
    synchronizations) the loop ends if every run stopped, calls ``progress(t, n_active)`` and honours ``should_stop``.
    """
    if sampler.rule not in ("eb_tci", "eb_tc"):
        raise ValueError("the torch path implements the top-two rules only")
    started = time.perf_counter()
    dev = torch.device(device)
    gen = torch.Generator(device=dev)
    gen.manual_seed(int(seed))
    f64 = torch.float64
    mu_t = torch.as_tensor(np.asarray(mu, dtype=float), dtype=f64, device=dev)
    k = mu_t.numel()
    i_star = int(torch.argmax(mu_t))
    deltas = np.sort(np.asarray(deltas, dtype=float))[::-1]
    d = len(deltas)
    log_inv = torch.as_tensor(np.log(1.0 / deltas), dtype=f64, device=dev)
    r = n_runs
    rows = torch.arange(r, device=dev)
    counts = torch.ones((r, k), dtype=f64, device=dev)
    sums = (torch.rand((r, k), generator=gen, device=dev, dtype=f64) < mu_t).to(f64)
    tau = torch.full((r, d), -1, dtype=torch.int64, device=dev)
    rec = torch.full((r, d), -1, dtype=torch.int64, device=dev)
    active = torch.ones(r, dtype=torch.bool, device=dev)
    lead_rounds = torch.zeros((r, k), dtype=f64, device=dev)
    lead_pulls = torch.zeros((r, k), dtype=f64, device=dev)
    beta = sampler.beta
    t = k
    steps = 0
    while t < t_max:
        mu_hat = sums / counts
        noise = torch.rand((r, k + 2), generator=gen, device=dev, dtype=f64)
        ties = noise[:, :k]
        leader = ((mu_hat == mu_hat.max(dim=1, keepdim=True).values) * ties).argmax(dim=1)
        # W(B, j) = N_B h(μ̂_B) + N_j h(μ̂_j) − (N_B + N_j) h(u)
        nh = counts * _neg_entropy(mu_hat)
        n_b = counts[rows, leader].unsqueeze(1)
        mu_b = mu_hat[rows, leader].unsqueeze(1)
        n_tot = n_b + counts
        u = (n_b * mu_b + counts * mu_hat) / n_tot
        w = nh[rows, leader].unsqueeze(1) + nh - n_tot * _neg_entropy(u)
        w = torch.where(mu_hat < mu_b, w.clamp_min(0.0), torch.zeros_like(w))
        w[rows, leader] = math.inf
        z = w.min(dim=1).values
        if d:
            base = math.log(1.0 + math.log(t)) if threshold_kind == "heuristic" else math.log(2.0 * t * (k - 1))
            newly = (z.unsqueeze(1) > base + log_inv) & (tau < 0) & active.unsqueeze(1)
            tau = torch.where(newly, torch.full_like(tau, t), tau)
            rec = torch.where(newly, leader.unsqueeze(1).expand_as(rec), rec)
            active = active & (tau[:, -1] < 0)
            if steps % check_every == 0:
                n_active = int(active.sum())
                if n_active == 0 or (should_stop is not None and should_stop()):
                    break
                if progress is not None:
                    progress(t, n_active)
        index = w + torch.log(counts) if sampler.rule == "eb_tci" else w
        chal = ((index == index.min(dim=1, keepdim=True).values) * ties).argmax(dim=1)
        forced = None
        if sampler.forced_exploration:
            forced = counts.min(dim=1).values < math.sqrt(t / k)
        if sampler.selection == "randomized":
            pull_leader = noise[:, k] < beta
        else:
            play = active if forced is None else active & ~forced
            lead_rounds[rows, leader] += play.to(f64)
            pull_leader = (lead_pulls[rows, leader] <= beta * lead_rounds[rows, leader]) & play
            lead_pulls[rows, leader] += pull_leader.to(f64)
        arm = torch.where(pull_leader, leader, chal)
        if forced is not None:
            least = ((counts == counts.min(dim=1, keepdim=True).values) * ties).argmax(dim=1)
            arm = torch.where(forced, least, arm)
        reward = (noise[:, k + 1] < mu_t[arm]).to(f64)
        live = active.to(f64)
        counts[rows, arm] += live
        sums[rows, arm] += reward * live
        t += 1
        steps += 1
    tau_np = tau.cpu().numpy()
    rec_np = rec.cpu().numpy()
    return {
        "tau": tau_np,
        "recommendation": rec_np,
        "correct": rec_np == i_star,
        "deltas": deltas,
        "steps": steps,
        "seconds": time.perf_counter() - started,
    }

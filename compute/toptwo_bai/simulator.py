"""Vectorized simulator of top-two (β-EB-TCI, EB-TC), uniform and Track-and-Stop samplers with GLR stopping.

R independent runs advance in lock-step over t: every step is a handful of array operations on the (A, K)
state of the A runs still active (finished runs are compacted away), never a Python loop over runs.

One trajectory serves a whole grid of δ: the sampling rules do not depend on δ, so the first crossing
Z_t > c(t, δ_d) is recorded for every δ_d and a run stays active until the smallest δ stops it (each δ's τ
has the exact marginal law; the δ's share trajectories).  ``simulate_loop`` is the same algorithm as a plain
per-run Python loop (the benchmark's reference).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .characteristic import optimal_weights_batch
from .rules import challenger, forced_exploration_budget, leader_costs, random_argmax, random_argmin

RULES = ("eb_tci", "eb_tc", "uniform", "track_and_stop")


@dataclass
class Sampler:
    """A sampling rule.  ``rule``: eb_tci | eb_tc | uniform | track_and_stop.

    Top-two rules: leader B_t = empirical best arm; challenger by TCI (penalized) or TC;
    ``selection`` "randomized" pulls B_t with probability β (Jourdan et al. 2022), "tracking" pulls B_t iff
    N^lead_B ≤ β·L_B (Jourdan & Degenne 2022).  ``forced_exploration`` (design choice): if min_i N_i < √(t/K),
    pull argmin_i N_i (costs ≤ √(Kt) + K pulls by time t).  Track-and-Stop: D-tracking of w*(μ̂), recomputed
    every ``tas_every`` steps, with GK16's forced exploration N_i < √t − K/2.
    """

    rule: str = "eb_tci"
    beta: float = 0.5
    selection: str = "randomized"
    forced_exploration: bool = False
    tas_every: int = 50

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}")
        if self.selection not in ("randomized", "tracking"):
            raise ValueError(f"unknown selection {self.selection!r}")

    @property
    def label(self) -> str:
        if self.rule in ("uniform", "track_and_stop"):
            return {"uniform": "uniform", "track_and_stop": "Track-and-Stop"}[self.rule]
        name = f"{self.beta:g}-EB-{'TCI' if self.rule == 'eb_tci' else 'TC'}"
        if self.selection == "tracking":
            name += " (tracking)"
        if self.forced_exploration:
            name += " + forced expl."
        return name


@dataclass
class Result:
    """Outcome of a batch.  τ is −1 for runs censored at t_max."""

    tau: np.ndarray  # (R, D) stopping time for each δ, −1 if censored
    recommendation: np.ndarray  # (R, D) recommended arm at τ, −1 if censored
    correct: np.ndarray  # (R, D) bool: recommendation == i*
    deltas: np.ndarray  # (D,) sorted decreasingly (increasing thresholds)
    counts: np.ndarray  # (R, K) N_i at the end of each run
    challenger_pulls: np.ndarray  # (R, K) pulls of arm j made as the challenger
    forced_pulls: np.ndarray  # (R,) forced-exploration pulls
    forced_excess: np.ndarray  # (R,) max_t [forced(t) − (√(Kt) + K)]  (≤ 0 when the budget holds)
    tracking_gap: np.ndarray  # (R,) max_t max_i |N^lead_i − β·L_i|  (tracking only, else 0)
    last_wrong_leader: np.ndarray  # (R,) last t at which B_t ≠ i*  (K − 1 if never wrong)
    checkpoints: np.ndarray  # (C,) times at which trajectories were recorded
    proportions: np.ndarray  # (C, R, K) N_i(t)/t at the checkpoints, NaN once a run has stopped
    leader_correct: np.ndarray  # (C, R) B_t == i* at the checkpoints (False once stopped; see ``alive``)
    alive: np.ndarray  # (C, R) run still active at the checkpoint
    forced_at: np.ndarray  # (C, R) forced pulls so far at the checkpoint
    steps: int = 0  # lock-step iterations performed
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


class BatchState:
    """The state of the active runs, exposed to per-step hooks (e.g. the live dashboard)."""

    def __init__(self, r: int, k: int) -> None:
        self.idx = np.arange(r)  # global run ids of the active rows, increasing
        self.counts = np.ones((r, k))  # N_i (after the initial pull of every arm)
        self.sums = np.zeros((r, k))  # S_i
        self.t = k
        self.leader = np.zeros(r, dtype=int)
        self.stat = np.zeros(r)  # Z_t
        self.thresholds = np.zeros(0)  # c(t, δ_d)
        self.chal: np.ndarray | None = None  # challengers of this step (top-two rules only)
        self.chal_retired = np.zeros(k, dtype=np.int64)  # challenger pulls of the runs that already stopped
        self.chal_active: np.ndarray = np.zeros((r, k), dtype=np.int64)  # per active run
        self.finished: list[tuple[int, int, bool]] = []  # (run, τ for the smallest δ, correct) as runs stop

    def challenger_totals(self) -> np.ndarray:
        """Pulls made as the challenger, per arm, all runs together."""
        return self.chal_retired + self.chal_active.sum(axis=0)

    def row_of(self, run: int) -> int | None:
        """Position of global run ``run`` among the active rows, or None once it stopped."""
        pos = int(np.searchsorted(self.idx, run))
        return pos if pos < len(self.idx) and self.idx[pos] == run else None


def log_checkpoints(k: int, t_max: int, n: int = 60) -> np.ndarray:
    """About n log-spaced integer times in [K, t_max]."""
    return np.unique(np.geomspace(k, t_max, n).astype(np.int64))


def simulate(
    mu: np.ndarray | list[float],
    sampler: Sampler,
    deltas: list[float] | np.ndarray,
    n_runs: int,
    rng: np.random.Generator,
    threshold_kind: str = "heuristic",
    t_max: int = 1_000_000,
    checkpoints: np.ndarray | None = None,
    hook: Callable[[BatchState], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Result:
    """Run ``n_runs`` independent runs on Bernoulli means μ until every δ has stopped (or t_max).

    With ``deltas`` empty the rule samples up to the horizon t_max without stopping (diagnostics).
    Stopping: at time t (t samples collected, t ≥ K) stop for δ when Z_t = min_{j≠B_t} W(B_t, j) > c(t, δ)
    and recommend B_t.  ``hook(state)`` is called after the stopping check of every step.
    """
    started = time.perf_counter()
    mu = np.asarray(mu, dtype=float)
    k = len(mu)
    i_star = int(np.argmax(mu))
    deltas = np.sort(np.asarray(deltas, dtype=float))[::-1]
    d = len(deltas)
    r = n_runs
    checkpoints = np.asarray(checkpoints if checkpoints is not None else [], dtype=np.int64)
    n_chk = len(checkpoints)
    beta = sampler.beta
    track_forced = sampler.forced_exploration or sampler.rule == "track_and_stop"
    if threshold_kind not in ("heuristic", "gk16"):
        raise ValueError(f"unknown threshold {threshold_kind!r}")
    heuristic = threshold_kind == "heuristic"
    log_inv = np.log(1.0 / deltas)

    # global outputs, written when runs finish
    out = {
        "tau": np.full((r, d), -1, dtype=np.int64),
        "rec": np.full((r, d), -1, dtype=np.int64),
        "counts": np.zeros((r, k)),
        "chal_pulls": np.zeros((r, k), dtype=np.int64),
        "forced": np.zeros(r, dtype=np.int64),
        "forced_excess": np.full(r, -np.inf),
        "tracking_gap": np.zeros(r),
        "last_wrong": np.full(r, k - 1, dtype=np.int64),
    }
    props = np.full((n_chk, r, k), np.nan)
    lead_ok = np.zeros((n_chk, r), dtype=bool)
    alive = np.zeros((n_chk, r), dtype=bool)
    forced_at = np.zeros((n_chk, r), dtype=np.int64)

    st = BatchState(r, k)
    st.sums = (rng.random((r, k)) < mu).astype(float)  # initialization: pull each arm once (t = K)
    # per-active-run state, compacted together when runs finish
    loc = {key: val.copy() for key, val in out.items() if key != "counts"}
    loc["lead_rounds"] = np.zeros((r, k))  # L_i: rounds in which i was the leader (tracking)
    loc["lead_pulls"] = np.zeros((r, k))  # N^lead_i: pulls of i in those rounds
    loc["weights"] = np.full((r, k), 1.0 / k)  # Track-and-Stop plug-in weights
    st.chal_active = loc["chal_pulls"]

    def retire(done: np.ndarray) -> None:
        gid = st.idx[done]
        for key, val in loc.items():
            if key in out:
                out[key][gid] = val[done]
        out["counts"][gid] = st.counts[done]
        st.chal_retired += loc["chal_pulls"][done].sum(axis=0)
        if d:
            for g, tau_g, rec_g in zip(
                gid.tolist(), loc["tau"][done, -1].tolist(), loc["rec"][done, -1].tolist(), strict=False
            ):
                st.finished.append((g, tau_g, rec_g == i_star))
        keep = ~done
        for key in list(loc):
            loc[key] = loc[key][keep]
        st.idx, st.counts, st.sums = st.idx[keep], st.counts[keep], st.sums[keep]
        st.chal_active = loc["chal_pulls"]

    chk_pos = 0
    steps = 0
    while len(st.idx):
        t = st.t
        if t >= t_max and (d or t > t_max):
            break
        n_act = len(st.idx)
        rows = np.arange(n_act)
        noise = rng.random((n_act, k + 2))  # tie-breaks (K columns), the β coin, the reward
        ties = noise[:, :k]
        mu_hat = st.sums / st.counts
        st.leader = random_argmax(mu_hat, ties)
        costs = leader_costs(mu_hat, st.counts, st.leader)
        st.stat = costs.min(axis=1)
        loc["last_wrong"][st.leader != i_star] = t

        # ---- stopping: first crossing of every threshold (thresholds increase as δ decreases) --------
        finished = None
        if d:
            # c(t, δ) = log(1 + log t) + log(1/δ)  or  log(2t(K − 1)) + log(1/δ), see rules.threshold
            st.thresholds = (math.log(1.0 + math.log(t)) if heuristic else math.log(2.0 * t * (k - 1))) + log_inv
            newly = (st.stat[:, None] > st.thresholds[None, :]) & (loc["tau"] < 0)
            if newly.any():
                loc["tau"][newly] = t
                loc["rec"][newly] = np.broadcast_to(st.leader[:, None], newly.shape)[newly]
                finished = loc["tau"][:, -1] >= 0
        # ---- trajectory checkpoints ------------------------------------------------------------------
        while chk_pos < n_chk and checkpoints[chk_pos] < t:
            chk_pos += 1
        if chk_pos < n_chk and checkpoints[chk_pos] == t:
            props[chk_pos, st.idx] = st.counts / t
            lead_ok[chk_pos, st.idx] = st.leader == i_star
            alive[chk_pos, st.idx] = True
            forced_at[chk_pos, st.idx] = loc["forced"]
            chk_pos += 1
        if hook is not None:
            hook(st)
        if d == 0 and t >= t_max:
            retire(np.ones(n_act, dtype=bool))
            break
        if finished is not None and finished.any():
            keep = ~finished
            mu_hat, costs, ties, noise = mu_hat[keep], costs[keep], ties[keep], noise[keep]
            st.leader, st.stat = st.leader[keep], st.stat[keep]
            retire(finished)
            n_act = len(st.idx)
            rows = np.arange(n_act)
            if n_act == 0:
                break
        if should_stop is not None and steps % 256 == 0 and should_stop():
            break

        # ---- sampling rule ---------------------------------------------------------------------------
        st.chal = None
        is_forced = None
        if sampler.rule == "uniform":
            arm = random_argmin(st.counts, ties)  # round robin over the least-sampled arms
        elif sampler.rule == "track_and_stop":
            if steps % sampler.tas_every == 0:
                loc["weights"], _ = optimal_weights_batch(mu_hat, n_outer=25, n_inner=20)
            is_forced = st.counts.min(axis=1) < math.sqrt(t) - k / 2.0
            arm = np.where(is_forced, random_argmin(st.counts, ties), np.argmax(t * loc["weights"] - st.counts, axis=1))
        else:
            chal = challenger(costs, st.counts, ties, penalized=sampler.rule == "eb_tci")
            st.chal = chal
            if sampler.forced_exploration:
                is_forced = st.counts.min(axis=1) < math.sqrt(t / k)
            if sampler.selection == "randomized":
                pull_leader = noise[:, k] < beta
            else:
                ld = st.leader
                lr, lp = loc["lead_rounds"], loc["lead_pulls"]
                play = rows if is_forced is None else rows[~is_forced]
                lr[play, ld[play]] += 1.0
                pull_leader = lp[rows, ld] <= beta * lr[rows, ld]
                if is_forced is not None:
                    pull_leader &= ~is_forced
                lp[rows[pull_leader], ld[pull_leader]] += 1.0
                gap = np.abs(lp - beta * lr).max(axis=1)
                np.maximum(loc["tracking_gap"], gap, out=loc["tracking_gap"])
            arm = np.where(pull_leader, st.leader, chal)
            by_chal = ~pull_leader
            if is_forced is not None:
                arm = np.where(is_forced, random_argmin(st.counts, ties), arm)
                by_chal &= ~is_forced
            loc["chal_pulls"][rows, chal] += by_chal
        if is_forced is not None:
            loc["forced"] += is_forced
        if track_forced:
            excess = loc["forced"] - forced_exploration_budget(t + 1, k)
            np.maximum(loc["forced_excess"], excess, out=loc["forced_excess"])

        reward = noise[:, k + 1] < mu[arm]
        st.counts[rows, arm] += 1.0
        st.sums[rows, arm] += reward
        st.t = t + 1
        steps += 1

    if len(st.idx):  # censored at t_max (or cancelled)
        retire(np.ones(len(st.idx), dtype=bool))
    rec = out["rec"]
    return Result(
        tau=out["tau"],
        recommendation=rec,
        correct=rec == i_star,
        deltas=deltas,
        counts=out["counts"],
        challenger_pulls=out["chal_pulls"],
        forced_pulls=out["forced"],
        forced_excess=np.where(np.isfinite(out["forced_excess"]), out["forced_excess"], 0.0),
        tracking_gap=out["tracking_gap"],
        last_wrong_leader=out["last_wrong"],
        checkpoints=checkpoints,
        proportions=props,
        leader_correct=lead_ok,
        alive=alive,
        forced_at=forced_at,
        steps=steps,
        seconds=time.perf_counter() - started,
    )


# ------------------------------------------------------------------------------------------------
# The same algorithm as a plain per-run Python loop (benchmark reference)
# ------------------------------------------------------------------------------------------------
def _kl(p: float, q: float) -> float:
    q = min(max(q, 1e-12), 1.0 - 1e-12)
    out = 0.0
    if p > 0.0:
        out += p * math.log(p / q)
    if p < 1.0:
        out += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return out


def simulate_one_loop(
    mu: list[float],
    sampler: Sampler,
    delta: float,
    rng: np.random.Generator,
    threshold_kind: str = "heuristic",
    t_max: int = 1_000_000,
) -> tuple[int, int]:
    """One run of a top-two sampler (randomized selection) with GLR stopping, as plain Python.  Returns (τ, B_τ)."""
    if sampler.rule not in ("eb_tci", "eb_tc") or sampler.selection != "randomized":
        raise ValueError("the loop reference implements randomized EB-TCI / EB-TC only")
    import random

    py = random.Random(int(rng.integers(2**63)))
    k = len(mu)
    counts = [1.0] * k
    sums = [1.0 if py.random() < m else 0.0 for m in mu]
    t = k
    while t < t_max:
        mh = [s / n for s, n in zip(sums, counts, strict=False)]
        best = max(mh)
        tied = [i for i in range(k) if mh[i] == best]
        b = tied[0] if len(tied) == 1 else py.choice(tied)
        z = math.inf
        chal_val, chal = math.inf, []
        for j in range(k):
            if j == b:
                continue
            if mh[b] > mh[j]:
                u = (counts[b] * mh[b] + counts[j] * mh[j]) / (counts[b] + counts[j])
                w = counts[b] * _kl(mh[b], u) + counts[j] * _kl(mh[j], u)
            else:
                w = 0.0
            z = min(z, w)
            v = w + math.log(counts[j]) if sampler.rule == "eb_tci" else w
            if v < chal_val:
                chal_val, chal = v, [j]
            elif v == chal_val:
                chal.append(j)
        if threshold_kind == "heuristic":
            c = math.log((1.0 + math.log(t)) / delta)
        else:
            c = math.log(2.0 * t * (k - 1) / delta)
        if z > c:
            return t, b
        if sampler.forced_exploration and min(counts) < math.sqrt(t / k):
            low = min(counts)
            arm = py.choice([i for i in range(k) if counts[i] == low])
        elif py.random() < sampler.beta:
            arm = b
        else:
            arm = chal[0] if len(chal) == 1 else py.choice(chal)
        counts[arm] += 1.0
        sums[arm] += 1.0 if py.random() < mu[arm] else 0.0
        t += 1
    return -1, -1


def simulate_loop(
    mu: list[float],
    sampler: Sampler,
    delta: float,
    n_runs: int,
    rng: np.random.Generator,
    threshold_kind: str = "heuristic",
    t_max: int = 1_000_000,
) -> np.ndarray:
    """``n_runs`` runs of ``simulate_one_loop``; returns an (R, 2) array of (τ, recommendation)."""
    return np.array([simulate_one_loop(list(mu), sampler, delta, rng, threshold_kind, t_max) for _ in range(n_runs)])

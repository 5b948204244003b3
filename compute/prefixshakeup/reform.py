"""Prompt re-forming policies: which records go where in each prompt, and in which order prompts run.

* ``original``  — chronological records, arrival order (baseline 2 when served by the radix cache).
* ``lpm``       — chronological records, prompts sorted lexicographically = DFS of their trie (baseline 3,
                  the offline form of SGLang's longest-prefix-match scheduling).
* ``ggr``       — GGR-style lossless reordering of each user's older records (recursive greedy on the
                  record shared by most prompts, Liu et al. MLSys 2025) + lexicographic sort (baseline 4).
* ``shakeup``   — PrefixShakeup(d, m, C): Alleviator (Jaccard k-medoids clusters, capacity-checked) and, in
                  each cluster, discordance-tolerant GGR: a user lacking the group's next record may adopt it
                  as a *foreign* record while it holds fewer than d of them (design choice; d = 0 is GGR per
                  cluster), then lexicographic sort.

Recency protection: the last m records of every user stay chronological at the end of the record list.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .similarity import jaccard_matmul
from .workload import REC_LEN, Formed, Workload, prompt_tokens


@dataclass
class Plan:
    """Formed prompts (index = user), serving order, and planning time split by phase."""

    formed: list[Formed]
    order: list[int]
    seconds: dict[str, float] = field(default_factory=dict)
    clusters: list[list[int]] = field(default_factory=list)

    @property
    def planning_seconds(self) -> float:
        return float(sum(self.seconds.values()))

    def prompts(self, wl: Workload) -> list[list[int]]:
        """Token lists in serving order."""
        return [prompt_tokens(wl, self.formed[u]) for u in self.order]


def split_recency(recs: list[int], m: int) -> tuple[list[int], list[int]]:
    """(older records, the last m records) — the last m stay chronological in the suffix."""
    if m <= 0:
        return list(recs), []
    return list(recs[:-m]), list(recs[-m:])


def lexicographic(wl: Workload, formed: list[Formed], users: list[int] | None = None) -> list[int]:
    """Users sorted by their prompt token sequences: a DFS over the prompts' trie."""
    users = list(range(len(formed))) if users is None else users
    keys = {u: prompt_tokens(wl, formed[u]) for u in users}
    return sorted(users, key=lambda u: keys[u])


def global_frequency(records: list[list[int]], n_templates: int) -> np.ndarray:
    f = np.zeros(n_templates, dtype=np.int64)
    for rs in records:
        f[rs] += 1
    return f


def tolerant_ggr(
    older: list[list[int]], n_templates: int, tiebreak: np.ndarray, d: int = 0, adopt: float = 0.5
) -> tuple[list[list[int]], list[list[int]]]:
    """Recursive greedy prefix building over a group of prompts; returns (orders, foreign records) per prompt.

    Group S at the next position: r* = argmax_r |{u ∈ S : r ∈ rest_u}| (ties by ``tiebreak``).  If fewer than
    two prompts hold r*, each prompt's rest follows in ``tiebreak`` order and S is done.  Otherwise S splits into
    S₁ (holders of r*, plus — discordance — non-holders with < d foreign records when holders are ≥ ``adopt``·|S|)
    which place r* next, and S₀ = S \\ S₁ which continues at the same position.  d = 0 is GGR's greedy.
    Trailing foreign records that end up shared with no other prompt are dropped afterwards.
    """
    n = len(older)
    rest = np.zeros((n, n_templates), dtype=bool)
    for u, rs in enumerate(older):
        rest[u, rs] = True
    tb = np.asarray(tiebreak, float)
    tb = 0.5 * (tb - tb.min()) / (np.ptp(tb) + 1.0)  # < 1: only breaks ties between counts
    orders: list[list[int]] = [[] for _ in range(n)]
    foreign: list[list[int]] = [[] for _ in range(n)]
    n_foreign = np.zeros(n, dtype=np.int64)
    stack = [np.arange(n)]
    while stack:
        S = stack.pop()
        if len(S) == 0:
            continue
        counts = rest[S].sum(0)
        r = int(np.argmax(counts + tb * (counts > 0)))
        if counts[r] < 2:
            for u in S:
                rs = np.flatnonzero(rest[u])
                orders[u].extend(int(x) for x in rs[np.argsort(-tb[rs], kind="stable")])
                rest[u] = False
            continue
        has = rest[S, r]
        take = has.copy()
        if d > 0 and counts[r] >= adopt * len(S):
            take |= n_foreign[S] < d
        S1, S0 = S[take], S[~take]
        for u in S1:
            orders[u].append(r)
            if not rest[u, r]:
                foreign[u].append(r)
                n_foreign[u] += 1
        rest[S1, r] = False
        stack.append(S0)
        stack.append(S1)
    if d > 0:
        _drop_unshared_foreign(orders, foreign)
    return orders, foreign


def _drop_unshared_foreign(orders: list[list[int]], foreign: list[list[int]]) -> None:
    """Remove foreign records placed after the prompt's longest shared record prefix (they buy no reuse)."""
    idx = sorted(range(len(orders)), key=lambda u: orders[u])
    shared = np.zeros(len(orders), dtype=np.int64)
    for a, b in zip(idx, idx[1:], strict=False):
        k = 0
        oa, ob = orders[a], orders[b]
        while k < min(len(oa), len(ob)) and oa[k] == ob[k]:
            k += 1
        shared[a], shared[b] = max(shared[a], k), max(shared[b], k)
    for u, fs in enumerate(foreign):
        if not fs:
            continue
        fset = set(fs)
        tail = [r for r in orders[u][shared[u] :] if r in fset]
        if tail:
            drop = set(tail)
            orders[u] = orders[u][: shared[u]] + [r for r in orders[u][shared[u] :] if r not in drop]
            foreign[u] = [r for r in fs if r not in drop]


# ------------------------------------------------------------------------------------------------
# Policies
# ------------------------------------------------------------------------------------------------
def plan_original(wl: Workload) -> Plan:
    return Plan([Formed(list(r)) for r in wl.records], list(range(wl.n_users)))


def plan_lpm(wl: Workload) -> Plan:
    t0 = time.perf_counter()
    formed = [Formed(list(r)) for r in wl.records]
    order = lexicographic(wl, formed)
    return Plan(formed, order, {"sort": time.perf_counter() - t0})


def plan_ggr(wl: Workload, m: int = 10) -> Plan:
    """Baseline 4: lossless GGR reordering of the older records (recency window m kept), then sort."""
    t0 = time.perf_counter()
    parts = [split_recency(r, m) for r in wl.records]
    freq = global_frequency(wl.records, wl.cfg.templates)
    orders, _ = tolerant_ggr([o for o, _ in parts], wl.cfg.templates, freq, d=0)
    formed = [Formed(orders[u] + parts[u][1]) for u in range(wl.n_users)]
    t1 = time.perf_counter()
    order = lexicographic(wl, formed)
    return Plan(formed, order, {"reorder": t1 - t0, "sort": time.perf_counter() - t1})


def kmedoids(D: np.ndarray, k: int, rng: np.random.Generator, iters: int = 10) -> np.ndarray:
    """k-medoids (alternating assignment / medoid update, k-medoids++ seeding) on a distance matrix."""
    n = len(D)
    k = max(1, min(k, n))
    med = [int(rng.integers(n))]
    for _ in range(1, k):
        dmin = D[:, med].min(1)
        p = dmin**2
        med.append(int(rng.choice(n, p=p / p.sum())) if p.sum() > 0 else int(rng.integers(n)))
    med = np.array(med)
    for _ in range(iters):
        lab = np.argmin(D[:, med], axis=1)
        new = med.copy()
        for c in range(k):
            mem = np.flatnonzero(lab == c)
            if len(mem):
                new[c] = mem[np.argmin(D[np.ix_(mem, mem)].sum(1))]
        if np.array_equal(new, med):
            break
        med = new
    return np.argmin(D[:, med], axis=1)


def shared_records_tokens(older: list[list[int]], n_templates: int) -> int:
    """Estimate of a cluster's shared trie: tokens of the records that ≥ 2 of its prompts hold."""
    return int(np.count_nonzero(global_frequency(older, n_templates) >= 2)) * REC_LEN


def plan_shakeup(
    wl: Workload,
    d: int = 0,
    m: int = 10,
    capacity: int | None = None,
    clusters: int = 0,
    note: bool = False,
    adopt: float = 0.5,
    batch_size: int = 1,
    device: str = "cpu",
    seed: int = 0,
) -> Plan:
    """PrefixShakeup(d, m, C): Alleviator clustering, discordance-tolerant GGR per cluster, DFS order."""
    rng = np.random.default_rng(seed)
    n = wl.n_users
    sec: dict[str, float] = {}
    t0 = time.perf_counter()
    J = jaccard_matmul(wl.records, wl.cfg.templates, device)
    sec["similarity"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    k = clusters if clusters > 0 else max(1, int(round(np.sqrt(n / 4))))
    lab = kmedoids(1.0 - J, k, rng)
    groups = [list(np.flatnonzero(lab == c)) for c in range(lab.max() + 1)]
    groups = [g for g in groups if g]
    parts = [split_recency(r, m) for r in wl.records]
    # capacity check: the running batch plus a cluster's shared trie must fit, else split the cluster in two
    if capacity is not None:
        mean_len = float(np.mean([len(r) for r in wl.records])) * REC_LEN + 40
        budget = capacity - batch_size * mean_len
        queue, groups = groups, []
        while queue:
            g = queue.pop()
            need = shared_records_tokens([parts[u][0] for u in g], wl.cfg.templates)
            if len(g) > 2 and budget > 0 and need > budget:
                sub = kmedoids(1.0 - J[np.ix_(g, g)], 2, rng)
                if 0 < sub.sum() < len(g):
                    queue += [[g[i] for i in np.flatnonzero(sub == s)] for s in (0, 1)]
                    continue
            groups.append(g)
    sec["cluster"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    freq = global_frequency(wl.records, wl.cfg.templates)
    formed: list[Formed] = [Formed([]) for _ in range(n)]
    for g in groups:
        orders, foreign = tolerant_ggr([parts[u][0] for u in g], wl.cfg.templates, freq, d=d, adopt=adopt)
        for i, u in enumerate(g):
            formed[u] = Formed(orders[i] + parts[u][1], foreign[i], note and bool(foreign[i]))
    sec["reorder"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    order = lexicographic(wl, formed)
    sec["sort"] = time.perf_counter() - t0
    return Plan(formed, order, sec, groups)


POLICIES = ("original", "lpm", "ggr", "shakeup")


def make_plan(name: str, wl: Workload, **kw: object) -> Plan:
    if name == "original":
        return plan_original(wl)
    if name == "lpm":
        return plan_lpm(wl)
    if name == "ggr":
        return plan_ggr(wl, m=int(kw.get("m", 10)))  # type: ignore[arg-type]
    if name == "shakeup":
        return plan_shakeup(wl, **kw)  # type: ignore[arg-type]
    raise ValueError(f"unknown policy {name!r}")

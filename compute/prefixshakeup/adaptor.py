"""The Adaptor: incremental re-forming under daily churn (spec §2, design choices marked).

Cached state: the clusters, each cluster's record-count vector F_g[r] = |{u ∈ g : r ∈ R_u}| and its plan-time
prefix hit rate.  Per update:

* new records of an existing user go to the end of the prompt (they are the newest, so they sit in the
  recency suffix and every existing prefix stays valid); F_g is updated in place;
* a new user joins the cluster maximizing Jaccard(R_u, P_g), P_g = {r : F_g[r] ≥ max(2, |g|/2)} (the cluster
  prefix), and follows the member order it can share longest (≤ d foreign records), the rest by global
  frequency, its last m records chronological;
* a cluster whose DFS prefix hit rate fell by more than ``threshold`` (relative) is re-planned alone.
"""

from __future__ import annotations

import time

import numpy as np

from .reform import Plan, global_frequency, lexicographic, split_recency, tolerant_ggr
from .schedule import trie_computed_tokens
from .workload import Formed, Workload, prompt_tokens


def cluster_phr(wl: Workload, formed: list[Formed], members: list[int]) -> float:
    """Prefix hit rate of a cluster's prompts served alone in DFS order with an unbounded cache."""
    prompts = sorted(prompt_tokens(wl, formed[u]) for u in members)
    total = sum(len(p) for p in prompts)
    return 1.0 - trie_computed_tokens(prompts) / max(1, total)


class Adaptor:
    def __init__(self, wl: Workload, plan: Plan, d: int, m: int, threshold: float = 0.1) -> None:
        self.d, self.m, self.threshold = d, m, threshold
        self.formed = [Formed(list(f.order), list(f.foreign), f.note) for f in plan.formed]
        self.clusters = [list(g) for g in plan.clusters]
        self.owner = np.zeros(wl.n_users, dtype=np.int64)
        for c, g in enumerate(self.clusters):
            self.owner[g] = c
        self.freq = np.stack([global_frequency([wl.records[u] for u in g], wl.cfg.templates) for g in self.clusters])
        self.phr0 = [cluster_phr(wl, self.formed, g) for g in self.clusters]
        self.seen = [len(r) for r in wl.records]

    def _follow(self, wl: Workload, u: int, g: list[int], gfreq: np.ndarray) -> Formed:
        """Prompt of a new user u in cluster g: the longest member-order prefix it can share with ≤ d foreign."""
        older, recent = split_recency(wl.records[u], self.m)
        have = set(older)
        best: list[int] = []
        best_foreign: list[int] = []
        for v in g:
            pre, fr = [], []
            for r in self.formed[v].order:
                if r not in have:
                    if len(fr) >= self.d:
                        break
                    fr.append(r)
                pre.append(r)
            while pre and pre[-1] in fr:  # trailing foreign records buy nothing
                fr.remove(pre.pop())
            if len(pre) > len(best):
                best, best_foreign = pre, fr
        rest = [r for r in older if r not in set(best)]
        rest.sort(key=lambda r: -gfreq[r])
        return Formed(best + rest + recent, best_foreign)

    def update(self, wl: Workload) -> tuple[Plan, dict[str, float]]:
        """Absorb the records and users added to ``wl`` since the last call; returns the plan and counters."""
        t0 = time.perf_counter()
        touched: set[int] = set()
        for u, k in enumerate(self.seen):  # new records of existing users → their suffix
            new = wl.records[u][k:]
            if new:
                self.formed[u].order.extend(new)
                self.freq[self.owner[u], new] += 1
                touched.add(int(self.owner[u]))
        gfreq = global_frequency(wl.records, wl.cfg.templates)
        n_old = len(self.seen)
        for u in range(n_old, wl.n_users):  # new users → nearest cluster prefix by Jaccard
            ru = np.zeros(wl.cfg.templates, dtype=bool)
            ru[wl.records[u]] = True
            sizes = np.array([len(g) for g in self.clusters])
            P = self.freq >= np.maximum(2, sizes[:, None] / 2)
            inter = (P & ru).sum(1)
            jac = inter / np.maximum(1, P.sum(1) + ru.sum() - inter)
            c = int(np.argmax(jac))
            self.formed.append(self._follow(wl, u, self.clusters[c], gfreq))
            self.clusters[c].append(u)
            self.freq[c, wl.records[u]] += 1
            touched.add(c)
        self.owner = np.concatenate([self.owner, np.zeros(wl.n_users - n_old, dtype=np.int64)])
        for c, g in enumerate(self.clusters):
            self.owner[g] = c
        replanned = 0
        for c in sorted(touched):
            g = self.clusters[c]
            phr = cluster_phr(wl, self.formed, g)
            if phr < (1.0 - self.threshold) * self.phr0[c]:
                parts = [split_recency(wl.records[u], self.m) for u in g]
                orders, foreign = tolerant_ggr([o for o, _ in parts], wl.cfg.templates, gfreq, d=self.d)
                for i, u in enumerate(g):
                    self.formed[u] = Formed(orders[i] + parts[i][1], foreign[i])
                self.phr0[c] = cluster_phr(wl, self.formed, g)
                replanned += 1
        self.seen = [len(r) for r in wl.records]
        order = lexicographic(wl, self.formed)
        sec = time.perf_counter() - t0
        plan = Plan(self.formed, order, {"adaptor": sec}, [list(g) for g in self.clusters])
        return plan, {"seconds": sec, "replanned": replanned, "touched": len(touched)}


def no_update(wl: Workload, plan: Plan, old_lengths: list[int]) -> Plan:
    """Keep the old plan: new records appended to the prompts, new users in original order at the end."""
    n_old = len(old_lengths)
    formed = [Formed(list(f.order), list(f.foreign), f.note) for f in plan.formed[:n_old]]
    for u in range(n_old):
        formed[u].order.extend(wl.records[u][old_lengths[u] :])
    formed += [Formed(list(wl.records[u])) for u in range(n_old, wl.n_users)]
    return Plan(formed, list(plan.order) + list(range(n_old, wl.n_users)))

"""Run a prompt schedule through the radix cache: the simulator, and the driver the real engine plugs into.

Per prompt p (in schedule order), as SGLang's scheduler does:
  1. n_hit = match_prefix(p[:-1]) (the last token is always computed: its logits are the tag);
  2. make room for |p| − n_hit tokens, evicting unlocked LRU leaves; the running batch stays locked;
     if the batch's locked KV leaves no room, the batch finishes first (its locks drop) and p starts a new one;
     if p alone does not fit, it is computed without being cached;
  3. compute the |p| − n_hit new tokens (``compute`` callback), insert p, lock its path until the batch ends.

Cost model (fitted on the real engine, spec §2):  t(n_new, n_ctx) = a·n_new + b·n_new·(n_ctx + n_new/2) + c.
Tagging reads its answer from the prefill's last logits, so there is no decode step (decode time = 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .radix import RadixCache

# default coefficients: the spec's 2-core timings of the 4-layer d=256 tiny LM (137 ms for 1k uncached tokens,
# ≈16 ms with 90 % cached) solved for (a, b) with c = 1 ms; experiments replace them by a fit on the engine
DEFAULT_COST = (1.2e-4, 3.1e-8, 1.0e-3)


def prefill_cost(n_new: np.ndarray, n_ctx: np.ndarray, coef: tuple[float, float, float] = DEFAULT_COST) -> np.ndarray:
    """t = a·n_new + b·n_new·(n_ctx + n_new/2) + c  (seconds)."""
    a, b, c = coef
    n_new, n_ctx = np.asarray(n_new, float), np.asarray(n_ctx, float)
    return a * n_new + b * n_new * (n_ctx + n_new / 2) + c


def fit_cost(n_new: np.ndarray, n_ctx: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """Least-squares (a, b, c) of the cost model from measured prefill times."""
    n_new, n_ctx = np.asarray(n_new, float), np.asarray(n_ctx, float)
    A = np.stack([n_new, n_new * (n_ctx + n_new / 2), np.ones_like(n_new)], axis=1)
    coef, *_ = np.linalg.lstsq(A, np.asarray(t, float), rcond=None)
    return float(coef[0]), float(coef[1]), float(coef[2])


@dataclass
class ScheduleResult:
    n_prompt: np.ndarray  # [n] prompt tokens
    n_cached: np.ndarray  # [n] tokens served from the cache
    stored: np.ndarray  # [n] 1 if the prompt was inserted into the cache
    evicted_tokens: int = 0
    evicted_nodes: int = 0
    max_stored: int = 0
    outputs: list[Any] = field(default_factory=list)

    @property
    def n_computed(self) -> np.ndarray:
        return self.n_prompt - self.n_cached

    @property
    def phr(self) -> float:
        """Prefix hit rate: Σ cached tokens / Σ prompt tokens."""
        return float(self.n_cached.sum() / max(1, self.n_prompt.sum()))

    def predicted_seconds(self, coef: tuple[float, float, float] = DEFAULT_COST) -> float:
        return float(prefill_cost(self.n_computed, self.n_cached, coef).sum())


ComputeFn = Callable[[list[int], int, list[Any]], tuple[Any, Any]]
"""compute(prompt, n_hit, cached values root→leaf) → (per-token values of the new tokens or None, output)."""


def run_schedule(
    prompts: list[list[int]],
    capacity: int | None,
    batch_size: int = 1,
    page_size: int = 1,
    compute: ComputeFn | None = None,
    cache: RadixCache | None = None,
) -> ScheduleResult:
    """Serve ``prompts`` in order through a radix cache of ``capacity`` tokens (None = ∞)."""
    cache = RadixCache(capacity, page_size) if cache is None else cache
    n = len(prompts)
    n_prompt = np.array([len(p) for p in prompts], dtype=np.int64)
    n_cached = np.zeros(n, dtype=np.int64)
    stored = np.zeros(n, dtype=np.int64)
    outputs: list[Any] = []
    locked: list[Any] = []
    max_stored = 0

    def end_batch() -> None:
        for nd in locked:
            cache.dec_lock_ref(nd)
        locked.clear()

    for i, p in enumerate(prompts):
        if len(locked) >= batch_size:
            end_batch()
        hit, node, values = cache.match_prefix(p[:-1])
        cache.inc_lock_ref(node)  # protect the matched prefix while making room
        fits = cache.ensure(len(p) - hit)
        if not fits and locked:
            end_batch()
            fits = cache.ensure(len(p) - hit)
        new_values, out = (None, None) if compute is None else compute(p, hit, values)
        outputs.append(out)
        n_cached[i] = hit
        if fits:
            value = None
            if new_values is not None:
                value = _Concat(values, new_values, hit)
            _, leaf = cache.insert(p, value)
            cache.inc_lock_ref(leaf)
            locked.append(leaf)
            stored[i] = 1
        cache.dec_lock_ref(node)
        max_stored = max(max_stored, cache.total_size)
    end_batch()
    return ScheduleResult(n_prompt, n_cached, stored, cache.evicted_tokens, cache.evicted_nodes, max_stored, outputs)


class _Concat:
    """Lazy per-token view over (cached values…, new values) so ``insert`` can slice ``value[a:b]``."""

    def __init__(self, cached: list[Any], new: Any, hit: int) -> None:
        self.cached, self.new, self.hit = cached, new, hit

    def __getitem__(self, s: slice) -> Any:
        a = s.start or 0
        if a >= self.hit:  # insert only ever slices from the first token not yet present (≥ hit here)
            return self.new[a - self.hit : (s.stop - self.hit) if s.stop is not None else None]
        raise IndexError("insert sliced into the cached part")


def lcp(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def trie_computed_tokens(sorted_prompts: list[list[int]]) -> int:
    """Σ|p_i| − Σ min(LCP(p_(i−1), p_(i)), |p_(i)| − 1): tokens a DFS order computes with an unbounded cache."""
    total = 0
    prev: list[int] = []
    for p in sorted_prompts:
        total += len(p) - min(lcp(prev, p), len(p) - 1)
        prev = p
    return total

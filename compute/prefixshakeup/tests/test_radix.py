"""Radix cache and scheduler: hand-made hit counts, invariants, the trie identity, the cost-model fit."""

from __future__ import annotations

import numpy as np
import pytest

from compute.prefixshakeup.radix import RadixCache
from compute.prefixshakeup.schedule import fit_cost, lcp, prefill_cost, run_schedule, trie_computed_tokens


def test_hand_made_hit_counts() -> None:
    # instruction (1 2 3) shared by all; prompts 2 and 3 also share record (4 5)
    prompts = [[1, 2, 3, 9, 9, 0], [1, 2, 3, 4, 5, 6, 0], [1, 2, 3, 4, 5, 7, 0], [1, 2, 3, 4, 5, 6, 0]]
    r = run_schedule(prompts, capacity=None)
    # p0: nothing cached; p1: instruction (3); p2: 1 2 3 4 5 (5); p3: identical to p1 → all but the last token (6)
    assert r.n_cached.tolist() == [0, 3, 5, 6]
    assert r.n_computed.tolist() == [6, 4, 2, 1]
    assert r.phr == pytest.approx(14 / 27)


def test_match_prefix_is_the_longest_match() -> None:
    rng = np.random.default_rng(0)
    c = RadixCache()
    seqs = [tuple(rng.integers(0, 3, size=int(rng.integers(1, 12)))) for _ in range(60)]
    for s in seqs[:40]:
        c.insert(s)
        assert c.total_size == c.stored_tokens()
    for q in seqs[40:]:
        n, _, _ = c.match_prefix(q)
        assert n == max(lcp(list(q), list(s)) for s in seqs[:40])


def test_capacity_locks_and_size_invariants() -> None:
    rng = np.random.default_rng(1)
    c = RadixCache(capacity=40)
    locked_nodes = []
    for i in range(200):
        s = tuple(rng.integers(0, 4, size=int(rng.integers(2, 10))))
        n, node, _ = c.match_prefix(s)
        c.inc_lock_ref(node)
        if c.ensure(len(s) - n):
            _, leaf = c.insert(s)
            c.dec_lock_ref(node)
            if i % 7 == 0 and len(locked_nodes) < 3:  # hold a few requests "running"
                c.inc_lock_ref(leaf)
                locked_nodes.append((leaf, s))
        else:
            c.dec_lock_ref(node)
        assert c.total_size <= 40
        assert c.total_size == c.stored_tokens()
        for _, held in locked_nodes:  # locked paths are never evicted
            assert c.match_prefix(held)[0] == len(held)
        if i % 50 == 49:
            for leaf, _ in locked_nodes:
                c.dec_lock_ref(leaf)
            locked_nodes.clear()
    assert c.evicted_tokens > 0


def test_trie_identity_with_unbounded_cache() -> None:
    rng = np.random.default_rng(2)
    prompts = sorted([list(rng.integers(0, 3, size=int(rng.integers(3, 15)))) for _ in range(80)])
    for batch in (1, 4):
        r = run_schedule(prompts, capacity=None, batch_size=batch)
        assert int(r.n_computed.sum()) == trie_computed_tokens(prompts)


def test_block_granularity_reuses_only_full_pages() -> None:
    prompts = [list(range(40)), list(range(37)) + [99, 98, 97]]
    r = run_schedule(prompts, capacity=None, page_size=16)
    assert r.n_cached.tolist() == [0, 32]  # 37 shared tokens → two full 16-token blocks


def test_cost_model_fit_recovers_coefficients() -> None:
    rng = np.random.default_rng(3)
    a, b, c = 1.5e-4, 4e-8, 2e-3
    n_new = rng.integers(1, 1200, size=300)
    n_ctx = rng.integers(0, 1200, size=300)
    t = prefill_cost(n_new, n_ctx, (a, b, c)) * (1 + 1e-3 * rng.standard_normal(300))
    fa, fb, fc = fit_cost(n_new, n_ctx, t)
    assert fa == pytest.approx(a, rel=0.02) and fb == pytest.approx(b, rel=0.02) and fc == pytest.approx(c, rel=0.1)

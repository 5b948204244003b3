"""Re-forming: lossless d = 0, recency suffix, GGR vs brute force, Jaccard, labels, the Adaptor's state."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from compute.prefixshakeup.adaptor import Adaptor
from compute.prefixshakeup.reform import global_frequency, plan_ggr, plan_shakeup, tolerant_ggr
from compute.prefixshakeup.similarity import jaccard_bitset, jaccard_matmul, jaccard_sets
from compute.prefixshakeup.workload import WorkloadConfig, add_round, generate, rule_label

SMALL = WorkloadConfig(users=40, records_mean=20, records_min=10, records_max=40, templates=300, seed=5)


@pytest.fixture(scope="module")
def wl():
    return generate(SMALL)


@pytest.mark.parametrize("m", [0, 5])
def test_d0_is_a_permutation_with_chronological_suffix(wl, m: int) -> None:
    for plan in (plan_ggr(wl, m), plan_shakeup(wl, d=0, m=m, capacity=4000)):
        assert sorted(plan.order) == list(range(wl.n_users))
        for u, f in enumerate(plan.formed):
            assert Counter(f.order) == Counter(wl.records[u]) and not f.foreign
            if m:
                assert f.order[-m:] == wl.records[u][-m:]


def test_discordant_prompts_hold_records_plus_at_most_d_foreign(wl) -> None:
    d, m = 3, 5
    plan = plan_shakeup(wl, d=d, m=m, capacity=None)
    assert sum(len(f.foreign) for f in plan.formed) > 0
    for u, f in enumerate(plan.formed):
        # foreign = not among the user's older records (a copy of a recent one counts as discordant too)
        assert len(f.foreign) <= d and not set(f.foreign) & set(wl.records[u][:-m])
        assert Counter(f.order) == Counter(wl.records[u]) + Counter(f.foreign)
        assert f.order[-m:] == wl.records[u][-m:]


def _nodes(orders: list[list[int]]) -> int:
    """Record-trie nodes = Σ|p| − Σ LCP of lexicographic neighbours."""
    s = sorted(orders)
    total = sum(len(o) for o in s)
    for a, b in zip(s, s[1:], strict=False):
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        total -= k
    return total


@pytest.mark.parametrize(("n", "k", "seed"), [(5, 3, 0), (4, 3, 1), (3, 4, 2), (5, 3, 3)])
def test_ggr_between_original_order_and_brute_force(n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    users = [list(rng.choice(6, size=k, replace=False)) for _ in range(n)]
    freq = global_frequency(users, 6)
    orders, _ = tolerant_ggr(users, 6, freq, d=0)
    best = min(_nodes(list(map(list, c))) for c in itertools.product(*[itertools.permutations(u) for u in users]))
    assert best <= _nodes(orders) <= _nodes(users)


def test_jaccard_matmul_equals_sets_and_bitsets(wl) -> None:
    ref = jaccard_sets(wl.records)
    np.testing.assert_allclose(jaccard_matmul(wl.records, wl.cfg.templates), ref, atol=1e-6)
    np.testing.assert_allclose(jaccard_bitset(wl.records, wl.cfg.templates), ref, atol=1e-12)


def test_rule_label_hand_computed() -> None:
    # fields[:, 0] = action·8 + category; action 0 view (w 1), 1 cart (w 2), 2 purchase (w 3)
    fields = np.array([[0 * 8 + 1, 0, 0, 0], [2 * 8 + 2, 0, 0, 0], [0 * 8 + 1, 0, 0, 0], [1 * 8 + 1, 0, 0, 0]])
    # no recency weight: cat1 = 1 + 1 + 2 = 4 > cat2 = 3
    assert rule_label([0, 1, 2, 3], fields, omega=0.0, window=0) == 1
    # ω = 1 on the last record: order [0, 2, 3, 1] puts the purchase last: cat2 = 6 > cat1 = 4
    assert rule_label([0, 2, 3, 1], fields, omega=1.0, window=1) == 2
    assert rule_label([1, 0, 2, 3], fields, omega=1.0, window=1) == 1


def test_adaptor_state_equals_recompute_on_updated_data() -> None:
    wl = generate(SMALL)
    plan = plan_shakeup(wl, d=2, m=5, capacity=None)
    ad = Adaptor(wl, plan, d=2, m=5, threshold=0.1)
    rng = np.random.default_rng(0)
    for _ in range(2):
        add_round(wl, rng, 0.2, 0.1)
        new_plan, _ = ad.update(wl)
        assert sorted(u for g in ad.clusters for u in g) == list(range(wl.n_users))
        for c, g in enumerate(ad.clusters):  # cached cluster counts = recount from the updated records
            np.testing.assert_array_equal(ad.freq[c], global_frequency([wl.records[u] for u in g], wl.cfg.templates))
        for u, f in enumerate(new_plan.formed):  # every prompt = its records + its foreign records
            assert Counter(f.order) == Counter(wl.records[u]) + Counter(f.foreign)
        assert sorted(new_plan.order) == list(range(wl.n_users))

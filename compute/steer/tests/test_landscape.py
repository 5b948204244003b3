"""reward_landscape's aggregation on a fake rollout with known per-scene scores."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

import compute.steer.evaluate as ev
from compute.steer.traces import DIRECT, THINK


def test_paired_difference_and_se_on_known_scores(monkeypatch) -> None:
    tiers = ["easy", "hard", "hard", "hard"]
    probs = [SimpleNamespace(data={"tier": t}) for t in tiers]

    # CoT scores 0.1·(i+1) + 0.01·seed; direct scores 0.2 for every scene and seed
    def fake(model, task, problems, route, max_new, temperature=0.0, seed=0):
        rows = []
        for i, p in enumerate(problems):
            s = 0.1 * (i + 1) + 0.01 * seed if route == THINK else 0.2
            rows.append({"tier": p.data["tier"], "epdms": s, "tokens": 30 if route == THINK else 10})
        return rows

    monkeypatch.setattr(ev, "rollout_eval", fake)
    out = ev.reward_landscape(None, None, probs, temperatures=(0.0, 1.0), n=3)
    assert [r["route"] for r in out] == [THINK, DIRECT, "cot-direct (paired)"] * 2
    greedy, sampled = out[2], out[5]
    assert out[0]["samples"] == 1 and out[3]["samples"] == 3
    # greedy: diff per scene = 0.1(i+1) − 0.2 = (−0.1, 0, 0.1, 0.2); hard = (0, 0.1, 0.2)
    d_hard = np.array([0.0, 0.1, 0.2])
    assert greedy["hard"]["n"] == 3
    assert np.isclose(greedy["hard"]["diff"], 0.1)
    assert np.isclose(greedy["hard"]["se"], d_hard.std(ddof=1) / np.sqrt(3))
    assert np.isclose(greedy["all"]["diff"], 0.05)
    assert greedy["easy"]["n"] == 1 and np.isnan(greedy["easy"]["se"])
    # sampled (seeds 0, 1, 2): each CoT score gains the mean 0.01 shift, the SE is unchanged
    assert np.isclose(sampled["hard"]["diff"], 0.11)
    assert np.isclose(sampled["hard"]["se"], greedy["hard"]["se"])
    assert np.isclose(out[3]["hard"], 0.3 + 0.01) and np.isclose(out[3]["tokens"], 30)
    assert np.isnan(out[0]["medium"])

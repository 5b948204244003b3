"""The real engine: cached-prefix logits equal a full recompute; its token counts equal the simulator's."""

from __future__ import annotations

import numpy as np
import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.prefixshakeup.engine import Engine
from compute.prefixshakeup.reform import plan_shakeup
from compute.prefixshakeup.schedule import run_schedule
from compute.prefixshakeup.workload import VOCAB, WorkloadConfig, generate


def _engine() -> Engine:
    torch.manual_seed(0)
    cfg = LMConfig(vocab_size=len(VOCAB), d_model=32, n_layers=2, n_heads=2, d_ff=64)
    return Engine(TinyLM(cfg))


def test_cached_logits_equal_full_recompute_and_counts_match_simulator() -> None:
    wl = generate(WorkloadConfig(users=12, records_mean=8, records_min=4, records_max=16, templates=60, seed=1))
    prompts = plan_shakeup(wl, d=1, m=2, capacity=None).prompts(wl)
    eng = _engine()
    capacity = 300  # binds: evictions and splits happen
    run = eng.run(prompts, capacity, batch_size=2)
    sim = run_schedule(prompts, capacity, batch_size=2)
    np.testing.assert_array_equal(run.sched.n_cached, sim.n_cached)
    np.testing.assert_array_equal(run.n_forward, sim.n_computed)  # tokens really fed to the model
    assert sim.n_cached[1:].min() > 0 and sim.evicted_tokens > 0
    for i, p in enumerate(prompts):
        full = eng.full_logits(p).numpy()
        np.testing.assert_allclose(run.label_logits[i], full, atol=1e-4)

"""Entry-point wiring that the smoke presets do not reach: the torch path of stopping_time on a CUDA device."""

from __future__ import annotations

import pytest

import compute.toptwo_bai.torch_sim as torch_sim
from compute.core.reporter import MemoryReporter
from compute.toptwo_bai import run


def test_stopping_time_uses_the_torch_path_on_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    real = torch_sim.simulate_torch
    calls = []

    def on_cpu(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args[5])
        return real(*args[:5], "cpu", *args[6:], **kwargs)

    monkeypatch.setattr(torch_sim, "simulate_torch", on_cpu)
    params = {
        "instance": "custom",
        "arm_means": [0.7, 0.5, 0.4, 0.3],
        "n_arms": 5,
        "beta": 0.5,
        "selection": "randomized",
        "challenger": "tci",
        "forced_exploration": False,
        "threshold": "heuristic",
        "n_runs": 20,
        "t_max": 100_000,
        "deltas": [0.1, 0.01],
        "slope_max_delta": 1e-4,
        "seed": 0,
        "device": "cuda",
    }
    r = MemoryReporter()
    out = run.stopping_time(params, r)
    torch.set_num_threads(threads)
    assert calls == ["cuda"]
    assert any("torch path" in msg for _, msg in r.logs)
    assert len(out["ratios"]) == 2 and out["censored"] == 0
    assert 0.8 < out["ratios"][1] < 2.5  # E[τ]/(T*_β log 1/δ) at δ = 0.01 (measured ≈ 1.1–1.4 on this instance)

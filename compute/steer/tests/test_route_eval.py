"""rollout_eval decides the route between the two route tokens only (argmax of p_c, or a draw from p_c), even when
most of the first-token mass has leaked to other tokens."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

import compute.steer.evaluate as ev
from compute.core.tasks.base import split_rng
from compute.steer.task import DrivingTask
from compute.steer.traces import DIRECT, THINK


def _patch(monkeypatch, pc: np.ndarray, mass: np.ndarray) -> list:
    seen: list = []

    def fake_route_probs(model, prompts, think_id, direct_id, temperature=1.0):
        return pc[: len(prompts)], mass[: len(prompts)]

    def fake_generate(model, prompts, temperature, max_new, eos_id, pad_id, force_prefix, generator):
        seen.append(force_prefix)
        resp = torch.tensor([[fp[0], eos_id] for fp in force_prefix])
        return SimpleNamespace(response=resp, response_mask=torch.ones_like(resp))

    monkeypatch.setattr(ev, "route_probs", fake_route_probs)
    monkeypatch.setattr(ev, "generate", fake_generate)
    return seen


def test_greedy_route_is_argmax_of_p_c_despite_leaked_mass(monkeypatch) -> None:
    task = DrivingTask()
    probs = task.sample(4, split_rng(0, "test"), "test")
    pc = np.array([0.7, 0.3, 0.5, 0.49])
    mass = np.array([0.05, 0.9, 0.2, 1.0])  # scene 0: 95 % of the first-token mass on other tokens
    seen = _patch(monkeypatch, pc, mass)
    model = SimpleNamespace(device=torch.device("cpu"))
    rows = ev.rollout_eval(model, task, probs, None, 48)
    think, direct = task.tokenizer.stoi[THINK], task.tokenizer.stoi[DIRECT]
    assert seen[0] == [[think], [direct], [think], [direct]]
    assert [r["route"] for r in rows] == [THINK, DIRECT, THINK, DIRECT]
    assert np.allclose([r["route_mass"] for r in rows], mass)
    s = ev.summarise(rows)
    assert np.isclose(s["route_mass"], mass.mean()) and np.isclose(s["cot_all"], 0.5)
    # a forced route overrides the router
    ev.rollout_eval(model, task, probs, DIRECT, 48)
    assert seen[1] == [[direct]] * 4


def test_sampled_route_follows_p_c(monkeypatch) -> None:
    task = DrivingTask()
    probs = task.sample(1, split_rng(1, "test"), "test") * 2000
    pc = np.array([0.0] * 1000 + [0.8] * 1000)
    seen = _patch(monkeypatch, pc, np.ones(2000))
    ev.rollout_eval(SimpleNamespace(device=torch.device("cpu")), task, probs, None, 48, temperature=1.0, batch=2000)
    think = task.tokenizer.stoi[THINK]
    cot = np.array([fp[0] == think for fp in seen[0]])
    assert cot[:1000].sum() == 0  # p_c = 0 never thinks
    assert abs(cot[1000:].mean() - 0.8) < 0.05  # 1000 draws: SE 0.013

"""Recurrent PPO on a hidden-gain task that no memoryless policy can solve (known bound), vs the padded MLP.

One actuated limb at position x (observed); x' = x + 0.3·k·a with a hidden sign k = ±1 drawn per episode;
reward −|x'| for T = 8 steps, x₀ ~ U[−1, 1].  Without memory, the policy cannot know k, and by the triangle
inequality E|x + 0.3ka| ≥ |x| for any action, so every memoryless policy has expected return ≤ −T·E|x₀| = −4.
A recurrent policy can read k from (Δx, a_{t−1}) after one step and then drive x to 0.
"""

from __future__ import annotations

import numpy as np
import torch

from compute.modular_control.models import ModelConfig, Policy
from compute.modular_control.morph import CTX_DIM, OBS_DIM, visible_mask
from compute.modular_control.ppo import PPOConfig, train

torch.set_num_threads(1)
T = 8


class HiddenGain:
    """Batched-env interface of ``envs.BatchEnv`` (one limb, one robot)."""

    def __init__(self, n_slots: int, seed: int) -> None:
        self.n_slots = n_slots
        self.rng = np.random.default_rng(seed)
        self.x, self.k, self.t = np.zeros(n_slots), np.ones(n_slots), np.zeros(n_slots, dtype=int)

    def _reset(self, s: int) -> None:
        self.x[s], self.k[s], self.t[s] = self.rng.uniform(-1, 1), self.rng.choice([-1.0, 1.0]), 0

    def _out(self, **extra: np.ndarray) -> dict[str, np.ndarray]:
        S = self.n_slots
        obs = np.zeros((S, 1, OBS_DIM), dtype=np.float32)
        obs[:, 0, 0] = self.x
        return {
            "obs": obs,
            "ctx": np.zeros((S, 1, CTX_DIM), dtype=np.float32),
            "mask": np.ones((S, 1), dtype=bool),
            "act_mask": np.ones((S, 1), dtype=bool),
            "morph": np.zeros(S, dtype=int),
            **extra,
        }

    def reset(self) -> dict[str, np.ndarray]:
        for s in range(self.n_slots):
            self._reset(s)
        return self._out()

    def step(self, a: np.ndarray) -> dict[str, np.ndarray]:
        self.x = self.x + 0.3 * self.k * np.clip(a[:, 0], -1, 1)
        reward = -np.abs(self.x)
        self.t += 1
        done = self.t >= T
        for s in np.flatnonzero(done):
            self._reset(s)
        return self._out(reward=reward, done=done, terminated=done)


def _train_and_evaluate(arch: str, steps: int, seed: int = 0) -> tuple[float, float]:
    """Deterministic return on 512 fresh episodes, and the memoryless bound −T·mean|x₀| on those episodes."""
    torch.manual_seed(seed)
    pol = Policy(ModelConfig(arch=arch, d=32, layers=1, ff=64, n_max=1), visible_mask())
    train(HiddenGain(16, seed), pol, 1, steps, PPOConfig(steps_per_iter=32, bptt=8, lr=3e-3, epochs=4), seed=seed)
    env = HiddenGain(512, 99)
    cur = env.reset()
    bound = -T * float(np.abs(env.x).mean())
    h, prev_a, ret = pol.initial_state(512), np.zeros((512, 1), dtype=np.float32), np.zeros(512)
    with torch.no_grad():
        for t in range(T):
            mu, _, h, _ = pol(
                torch.as_tensor(cur["obs"])[None],
                torch.as_tensor(cur["ctx"])[None],
                torch.as_tensor(prev_a)[None],
                torch.as_tensor(cur["mask"])[None],
                h,
                torch.full((1, 512), t == 0),
            )
            a = mu[0].numpy()
            cur = env.step(a)
            ret += cur["reward"]
            prev_a = np.clip(a, -1, 1).astype(np.float32)
    return float(ret.mean()), bound


def test_recurrent_ppo_infers_the_hidden_gain() -> None:
    modrec, bound = _train_and_evaluate("modrec", 24_576)
    mlp, _ = _train_and_evaluate("mlp", 8_192)
    assert modrec > bound + 1.0  # beats every memoryless policy by a wide margin (measured −2.38 vs −3.97)
    assert mlp < bound + 0.3  # the MLP cannot beat the bound beyond sampling noise (sd ≈ 0.1 here)
    assert modrec > mlp + 1.0

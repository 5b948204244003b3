"""Throughput measurements: batched environment steps/s, policy inference and PPO update samples/s.

Used by ``bench/modular_control_speed.py``; every number is measured in the same process, one torch thread,
against process CPU time (``time.process_time``): on a shared machine wall-clock rates fall with the load, the
rate per CPU-second does not (everything here is single-threaded, so it equals the idle-machine wall rate).
"""

from __future__ import annotations

import time

import mujoco
import numpy as np
import torch
from mujoco import rollout

from compute.modular_control.envs import BatchEnv
from compute.modular_control.models import ARCHS, ModelConfig, Policy
from compute.modular_control.morph import family_names, make_morph, visible_mask
from compute.modular_control.ppo import PPOConfig, Rollout, update


def env_steps_per_s(family: str, n_slots: int = 8, steps: int = 60, seed: int = 0) -> float:
    """Control steps/s of a BatchEnv over one family's robots (random actions, auto-reset included)."""
    env = BatchEnv(family_names(family), n_slots, seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)
    t = time.process_time()
    for _ in range(steps):
        env.step(rng.uniform(-1, 1, (n_slots, 9)))
    return steps * n_slots / (time.process_time() - t)


def physics_loop_vs_rollout(name: str = "walker_7_main", n_slots: int = 8, reps: int = 10) -> dict[str, float]:
    """Physics only: control steps/s of a Python ``mj_step(nstep)`` loop vs one ``mujoco.rollout`` call (1 thread)."""
    morph = make_morph(name)
    m, k = morph.model, morph.frame_skip
    datas = [mujoco.MjData(m) for _ in range(n_slots)]
    t = time.process_time()
    for _ in range(reps):
        for d in datas:
            mujoco.mj_step(m, d, nstep=k)
    loop = reps * n_slots / (time.process_time() - t)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.zeros((n_slots, mujoco.mj_stateSize(m, spec)))
    mujoco.mj_getState(m, datas[0], state[0], spec)
    state[:] = state[0]
    ctrl = np.zeros((n_slots, k, m.nu))
    t = time.process_time()
    for _ in range(reps):
        rollout.rollout([m] * n_slots, [mujoco.MjData(m)], state, ctrl)
    roll = reps * n_slots / (time.process_time() - t)
    return {"loop": loop, "rollout": roll}


def _policy(arch: str) -> Policy:
    torch.manual_seed(0)
    return Policy(ModelConfig(arch=arch), visible_mask())


@torch.no_grad()
def inference_samples_per_s(arch: str, batch: int = 16, reps: int = 20) -> float:
    """Robots/s of one policy step (B robots × 9 limbs, 7 valid)."""
    pol = _policy(arch).eval()
    obs, ctx = torch.randn(1, batch, 9, 14), torch.randn(1, batch, 9, 16)
    pa, mask = torch.zeros(1, batch, 9), torch.zeros(1, batch, 9, dtype=torch.bool)
    mask[..., :7] = True
    h, reset = pol.initial_state(batch), torch.zeros(1, batch, dtype=torch.bool)
    pol(obs, ctx, pa, mask, h, reset)
    t = time.process_time()
    for _ in range(reps):
        _, _, h, _ = pol(obs, ctx, pa, mask, h, reset)
    return reps * batch / (time.process_time() - t)


def update_samples_per_s(arch: str, family: str = "walker", n_slots: int = 8, steps: int = 64) -> float:
    """Samples/s of the PPO update (per epoch, BPTT chunks of 16) on one collected rollout."""
    pol = _policy(arch)
    env = BatchEnv(family_names(family), n_slots, seed=0)
    cfg = PPOConfig(steps_per_iter=steps, epochs=1)
    data = Rollout(env, pol, len(env.names), cfg, seed=0).collect()
    opt = torch.optim.Adam(pol.parameters(), lr=cfg.lr)
    t = time.process_time()
    update(pol, opt, data, cfg, np.random.default_rng(0))
    return steps * n_slots / (time.process_time() - t)


def run_all(quick: bool = False) -> list[dict[str, float | str]]:
    """Rows (quantity, setting, value) of the whole benchmark."""
    rows: list[dict[str, float | str]] = []
    for fam in ("cheetah", "walker", "hopper", "humanoid"):
        rows.append(
            {
                "quantity": "env control steps/s (8 slots)",
                "setting": fam,
                "value": env_steps_per_s(fam, steps=20 if quick else 60),
            }
        )
    ph = physics_loop_vs_rollout(reps=3 if quick else 10)
    rows.append({"quantity": "physics steps/s, Python loop", "setting": "walker_7_main", "value": ph["loop"]})
    rows.append({"quantity": "physics steps/s, mujoco.rollout", "setting": "walker_7_main", "value": ph["rollout"]})
    for arch in ARCHS:
        rows.append(
            {
                "quantity": "inference robots/s (batch 16)",
                "setting": arch,
                "value": inference_samples_per_s(arch, reps=5 if quick else 20),
            }
        )
    for arch in ARCHS:
        rows.append(
            {
                "quantity": "PPO update samples/s (per epoch)",
                "setting": arch,
                "value": update_samples_per_s(arch, steps=16 if quick else 64),
            }
        )
    return rows

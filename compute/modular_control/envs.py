"""Batched multi-robot environment: S slots, each holding one randomised robot, stepped together.

Reward (SMP, per family):  r = Δx_torso / Δt + alive_bonus − ctrl_cost · Σ_i a_i²,  with Δt = CONTROL_DT.
Termination (SMP rule per family): unless z_min < qpos[1] < z_max and |qpos[2]| < ang_max (cheetah never);
also on a non-finite state.  Episodes are truncated after ``episode_len`` steps.

Per episode, the slot takes the next robot round-robin, a kinematic variant (limb lengths) from a cached pool,
and fresh per-limb dynamics factors for damping, friction and armature (``DynamicsRange``).
Stepping is a Python loop over slots with ``mj_step(nstep=frame_skip)``: on 2 shared cores this is as fast as
``mujoco.rollout``'s thread pool and lets every slot hold a differently-sized model (design).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from compute.modular_control.morph import (
    CONTROL_DT,
    CTX_DIM,
    N_MAX,
    OBS_DIM,
    Morph,
    apply_dynamics,
    context,
    limb_observation,
    make_morph,
)


@dataclass(frozen=True)
class DynamicsRange:
    """Per-limb factor for damping/friction/armature: U[lo, hi], or, if ``ood``, U of [lo_out, lo) ∪ (hi, hi_out].

    Training: U[0.7, 1.3].  Out-of-distribution test: [0.4, 0.7) ∪ (1.3, 1.6] (spec §2).  ``fixed`` > 0 uses
    that exact factor for every limb (the scale grid of the zero-shot experiment).
    """

    lo: float = 0.7
    hi: float = 1.3
    ood: bool = False
    lo_out: float = 0.4
    hi_out: float = 1.6
    fixed: float = 0.0
    fields: tuple[bool, bool, bool] = (True, True, True)  # randomise (damping, friction, armature)
    log_uniform: bool = False  # in-range factors log-uniform instead of uniform (probe)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Factors of shape (n_limbs, 3); fields switched off stay at 1."""
        if self.fixed > 0:
            x = np.full(shape, self.fixed)
        elif self.ood:
            low = rng.uniform(self.lo_out, self.lo, shape)
            high = rng.uniform(self.hi, self.hi_out, shape)
            x = np.where(rng.random(shape) < 0.5, low, high)
        elif self.log_uniform:
            x = np.exp(rng.uniform(np.log(self.lo), np.log(self.hi), shape))
        else:
            x = rng.uniform(self.lo, self.hi, shape)
        return np.where(np.asarray(self.fields), x, 1.0)


@dataclass(frozen=True)
class KinematicsRange:
    """Limb-length factors: per limb U[lo, hi] from a pool of ``pool`` variants per robot, or a fixed factor."""

    lo: float = 1.0
    hi: float = 1.0
    pool: int = 1
    fixed: float = 0.0


class BatchEnv:
    """S environment slots over a list of robots; observations padded to N_MAX limbs.

    ``reset()`` / ``step(actions)`` return a dict with
    ``obs`` (S, N_MAX, OBS_DIM), ``ctx`` (S, N_MAX, CTX_DIM) raw context (the model hides c⁻),
    ``mask`` (S, N_MAX) valid limbs, ``act_mask`` (S, N_MAX) actuated limbs, and from ``step`` also
    ``reward`` (S,), ``done`` (S,) (terminated or truncated), ``terminated`` (S,), ``morph`` (S,) robot index.
    """

    def __init__(
        self,
        names: list[str],
        n_slots: int = 8,
        seed: int = 0,
        dynamics: DynamicsRange = DynamicsRange(),
        kinematics: KinematicsRange = KinematicsRange(),
        episode_len: int = 500,
        init_noise: float = 0.005,
    ) -> None:
        self.names = list(names)
        self.n_slots = n_slots
        self.rng = np.random.default_rng(seed)
        self.dynamics, self.kinematics = dynamics, kinematics
        self.episode_len = episode_len
        self.init_noise = init_noise
        self._pool: dict[tuple[int, int], Morph] = {}
        self._next = 0
        self.slot_morph = np.zeros(n_slots, dtype=int)
        self.morphs: list[Morph | None] = [None] * n_slots
        self.datas: list[mujoco.MjData | None] = [None] * n_slots
        self.t = np.zeros(n_slots, dtype=int)
        self.dyn_scales = np.ones((n_slots, N_MAX, 3))
        self.obs = np.zeros((n_slots, N_MAX, OBS_DIM), dtype=np.float32)
        self.ctx = np.zeros((n_slots, N_MAX, CTX_DIM), dtype=np.float32)
        self.mask = np.zeros((n_slots, N_MAX), dtype=bool)
        self.act_mask = np.zeros((n_slots, N_MAX), dtype=bool)

    # -- robots -------------------------------------------------------------------------------
    def _variant(self, k: int) -> Morph:
        kin = self.kinematics
        v = int(self.rng.integers(kin.pool)) if kin.fixed == 0 else 0
        key = (k, v)
        if key not in self._pool:
            if kin.fixed > 0:
                scales = np.full(N_MAX, kin.fixed)
            elif kin.lo == kin.hi == 1.0:
                scales = None
            else:
                vr = np.random.default_rng([k, v, 12345])  # variants are a fixed function of (robot, index)
                scales = vr.uniform(kin.lo, kin.hi, N_MAX)
            self._pool[key] = make_morph(self.names[k], scales)
        return self._pool[key].clone()

    def _reset_slot(self, s: int) -> None:
        k = self._next % len(self.names)
        self._next += 1
        morph = self._variant(k)
        scales = self.dynamics.sample(self.rng, (morph.n_limbs, 3))
        apply_dynamics(morph, scales)
        d = mujoco.MjData(morph.model)
        m = morph.model
        d.qpos[:] = m.qpos0 + self.rng.uniform(-self.init_noise, self.init_noise, m.nq)
        d.qvel[:] = self.rng.uniform(-self.init_noise, self.init_noise, m.nv)
        mujoco.mj_forward(m, d)
        self.slot_morph[s], self.morphs[s], self.datas[s], self.t[s] = k, morph, d, 0
        n = morph.n_limbs
        self.dyn_scales[s] = 1.0
        self.dyn_scales[s, :n] = scales
        self.ctx[s] = 0
        self.ctx[s, :n] = context(morph)
        self.mask[s] = False
        self.mask[s, :n] = True
        self.act_mask[s] = False
        self.act_mask[s, :n] = morph.actuator >= 0
        self.obs[s] = 0
        self.obs[s, :n] = limb_observation(morph, d)

    def reset(self) -> dict[str, np.ndarray]:
        for s in range(self.n_slots):
            self._reset_slot(s)
        return self._out()

    def _out(self, **extra: np.ndarray) -> dict[str, np.ndarray]:
        return {
            "obs": self.obs.copy(),
            "ctx": self.ctx.copy(),
            "mask": self.mask.copy(),
            "act_mask": self.act_mask.copy(),
            "morph": self.slot_morph.copy(),
            **extra,
        }

    # -- stepping -----------------------------------------------------------------------------
    def step(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        """Apply per-limb actions (S, N_MAX) in [−1, 1]; auto-reset finished slots (their next obs is fresh)."""
        actions = np.clip(np.asarray(actions, dtype=np.float64), -1.0, 1.0)
        reward = np.zeros(self.n_slots)
        terminated = np.zeros(self.n_slots, dtype=bool)
        done = np.zeros(self.n_slots, dtype=bool)
        final_morph = self.slot_morph.copy()
        for s in range(self.n_slots):
            morph, d = self.morphs[s], self.datas[s]
            m, fam = morph.model, morph.family
            act = morph.actuator >= 0
            a = actions[s, : morph.n_limbs][act]
            d.ctrl[morph.actuator[act]] = a
            x0 = d.qpos[0]
            mujoco.mj_step(m, d, nstep=morph.frame_skip)
            reward[s] = (d.qpos[0] - x0) / CONTROL_DT + fam.alive_bonus - fam.ctrl_cost * float(np.sum(a**2))
            z, ang = d.qpos[1], d.qpos[2]
            finite = bool(np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel)))
            terminated[s] = (not finite) or not (fam.z_min < z < fam.z_max and abs(ang) < fam.ang_max)
            if not finite:
                reward[s] = 0.0
            self.t[s] += 1
            done[s] = terminated[s] or self.t[s] >= self.episode_len
            if done[s]:
                self._reset_slot(s)
            else:
                self.obs[s, : morph.n_limbs] = limb_observation(morph, d)
        out = self._out(reward=reward, done=done, terminated=terminated)
        out["morph"] = final_morph  # the robot that produced this reward
        return out

    def frame(self, s: int = 0) -> dict[str, list]:
        """Stick figure of slot s: body positions (x, z) and parent links, for the dashboard."""
        morph, d = self.morphs[s], self.datas[s]
        p = d.xpos[morph.body]
        return {"x": p[:, 0].tolist(), "z": p[:, 2].tolist(), "parent": morph.parent.tolist()}

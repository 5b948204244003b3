"""Robots as sets of limbs: families, the limb graph, per-limb observations o^i and contexts c = (c⁺, c⁻).

A limb is the torso or a body whose parent joint is actuated (SMP's robots have exactly one hinge per body, so
#limbs = nu + 1).  MuJoCo numbers bodies in depth-first pre-order of the XML, which gives a stable DFS order.
Every robot is padded to ``N_MAX`` = 9 limbs (humanoid_2d_9_full) with a validity mask; the torso's action is
masked because it has no actuator.

Per-limb observation o^i (``OBS_DIM`` = 14), torso frame (spec §2):
    body position − torso position, rotated into the torso frame (3); body pitch as (sin, cos) (2);
    body height above the floor (1, design: lets the policy see posture); linear and angular velocity in the
    torso frame, clipped to ±10 (6); joint angle normalised to [−1, 1] by its range (1); joint velocity / 10 (1).
Context fields (``CONTEXT_FIELDS``): the observable c⁺ (mass, inertia diagonal, geom length and radius,
joint range, axis, gear, tree depth) and the hidden c⁻ (damping, friction, armature).  Positive quantities
enter as logs (design).  Which fields the policy sees is a boolean mask (``visible_mask``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import mujoco
import numpy as np

from compute.modular_control.convert import load_xml_text, smp_names

N_MAX = 9
OBS_DIM = 14
CONTROL_DT = 0.04  # s: 25 Hz control for every robot; frame_skip = CONTROL_DT / timestep (spec §2)

CONTEXT_FIELDS = [
    "mass",
    "inertia_x",
    "inertia_y",
    "inertia_z",
    "geom_length",
    "geom_radius",
    "range_lo",
    "range_hi",
    "axis_x",
    "axis_y",
    "axis_z",
    "gear",
    "depth",
    "damping",
    "friction",
    "armature",
]
HIDDEN_FIELDS = ("damping", "friction", "armature")  # c⁻ (spec §2): hidden by default
CTX_DIM = len(CONTEXT_FIELDS)


def visible_mask(reveal: tuple[str, ...] = ()) -> np.ndarray:
    """Boolean mask over ``CONTEXT_FIELDS``: c⁺ fields plus any c⁻ field named in ``reveal`` (ablations)."""
    return np.array([(f not in HIDDEN_FIELDS) or (f in reveal) for f in CONTEXT_FIELDS])


@dataclass(frozen=True)
class Family:
    """SMP reward and termination rule of one robot family (modular-mujoco-envs 1.5 environment files)."""

    name: str
    alive_bonus: float
    ctrl_cost: float
    z_min: float = -np.inf  # terminate unless z_min < qpos[1] < z_max and |qpos[2]| < ang_max
    z_max: float = np.inf
    ang_max: float = np.inf


FAMILIES = {
    "walker": Family("walker", 1.0, 1e-3, 0.8, 2.0, 1.0),
    "hopper": Family("hopper", 1.0, 1e-3, 0.95, np.inf, 1.0),
    "cheetah": Family("cheetah", 0.0, 0.1),
    "humanoid": Family("humanoid", 1.0, 1e-3, 0.4, 2.1, 1.0),
}


def family_of(name: str) -> str:
    """``"humanoid_2d_7_left_arm"`` → ``"humanoid"``."""
    return name.split("_")[0]


def family_names(family: str) -> list[str]:
    return [n for n in smp_names() if family_of(n) == family]


def split_names(families: list[str], split_seed: int, frac_test: float = 0.3) -> tuple[list[str], list[str]]:
    """Seeded, disjoint train/test XML split: ≈30% of each family held out (at least one robot kept for training)."""
    rng = np.random.default_rng(split_seed)
    train, test = [], []
    for fam in families:
        names = family_names(fam)
        perm = rng.permutation(len(names))
        k = min(len(names) - 1, int(round(frac_test * len(names))))
        test += sorted(names[i] for i in perm[:k])
        train += sorted(names[i] for i in perm[k:])
    return train, test


def _lowest_point(m: mujoco.MjModel, d: mujoco.MjData) -> float:
    """Lowest z of all robot geoms (capsule end-caps included) at the current state."""
    z = np.inf
    for g in range(m.ngeom):
        if m.geom_bodyid[g] == 0:
            continue
        c, rad = d.geom_xpos[g], m.geom_size[g, 0]
        half = m.geom_size[g, 1] if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE else 0.0
        axis = d.geom_xmat[g].reshape(3, 3)[:, 2]
        z = min(z, c[2] - abs(axis[2]) * half - rad)
    return float(z)


def build_model(name: str, length_scales: np.ndarray | None = None) -> mujoco.MjModel:
    """Compile one SMP robot; ``length_scales[i]`` scales limb i's geom and its children's offsets (i ≥ 1).

    Kinematic variants are edited through ``mujoco.MjSpec``: a limb's capsule (``fromto``, or ``pos`` and half
    length) and the positions of its child bodies are scaled about the limb's origin; the torso is then lifted
    or lowered so the lowest point keeps the original clearance (design: robots start standing, not buried).
    """
    spec = mujoco.MjSpec.from_string(load_xml_text(name))
    if length_scales is None:
        return spec.compile()
    base = spec.compile()
    d0 = mujoco.MjData(base)
    mujoco.mj_forward(base, d0)
    clearance = _lowest_point(base, d0)
    bodies = [b for b in spec.bodies if b.name != "world"]  # DFS order = limb order
    for i, b in enumerate(bodies):
        s = float(length_scales[i]) if i < len(length_scales) else 1.0
        if i == 0 or s == 1.0:
            continue
        for g in b.geoms:
            if np.all(np.isfinite(g.fromto)) and np.any(g.fromto != 0):
                g.fromto = np.asarray(g.fromto) * s
            else:
                g.pos = np.asarray(g.pos) * s
                size = np.array(g.size)
                size[1] *= s
                g.size = size
        for child in b.bodies:
            child.pos = np.asarray(child.pos) * s
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    bodies[0].pos = np.asarray(bodies[0].pos) + np.array([0.0, 0.0, clearance - _lowest_point(m, d)])
    return spec.compile()


@dataclass
class Morph:
    """One compiled robot with its limb graph.  Arrays are indexed by limb (DFS order), length ``n_limbs``."""

    name: str
    family: Family
    model: mujoco.MjModel
    body: np.ndarray  # body id of each limb
    joint: np.ndarray  # actuated parent joint id (−1 for the torso)
    actuator: np.ndarray  # actuator id (−1 for the torso)
    parent: np.ndarray  # parent limb index (−1 for the torso)
    depth: np.ndarray
    frame_skip: int
    base: dict[str, np.ndarray] = field(default_factory=dict)  # unrandomised damping/friction/armature
    index: dict[str, np.ndarray] = field(default_factory=dict)  # precomputed address arrays for observations

    @property
    def n_limbs(self) -> int:
        return len(self.body)

    def clone(self) -> Morph:
        """Independent copy (its own MjModel) for per-episode randomisation."""
        out = copy.copy(self)
        out.model = copy.copy(self.model)
        return out


def make_morph(name: str, length_scales: np.ndarray | None = None) -> Morph:
    """Build the limb graph of one robot (see module docstring)."""
    m = build_model(name, length_scales)
    bodies = np.arange(1, m.nbody)
    joint = np.full(len(bodies), -1)
    actuator = np.full(len(bodies), -1)
    for a in range(m.nu):
        j = int(m.actuator_trnid[a, 0])
        i = int(m.jnt_bodyid[j]) - 1
        if joint[i] != -1:
            raise ValueError(f"{name}: body {i + 1} has two actuated joints")
        joint[i], actuator[i] = j, a
    parent = m.body_parentid[bodies] - 1
    depth = np.zeros(len(bodies), dtype=int)
    for i in range(1, len(bodies)):
        depth[i] = depth[parent[i]] + 1
    if len(bodies) > N_MAX:
        raise ValueError(f"{name}: {len(bodies)} limbs > N_MAX={N_MAX}")
    dof = np.where(joint >= 0, m.jnt_dofadr[np.maximum(joint, 0)], -1)
    morph = Morph(
        name=name,
        family=FAMILIES[family_of(name)],
        model=m,
        body=bodies,
        joint=joint,
        actuator=actuator,
        parent=parent,
        depth=depth,
        frame_skip=max(1, int(round(CONTROL_DT / m.opt.timestep))),
    )
    j = joint[joint >= 0]
    morph.index = {
        "root": m.body_rootid[bodies],
        "act": np.flatnonzero(joint >= 0),
        "qpos": m.jnt_qposadr[j],
        "dof": m.jnt_dofadr[j],
        "lo": m.jnt_range[j, 0].copy(),
        "span": np.maximum(m.jnt_range[j, 1] - m.jnt_range[j, 0], 1e-6),
    }
    morph.base = {
        "dof": dof,
        "damping": m.dof_damping.copy(),
        "armature": m.dof_armature.copy(),
        "friction": m.geom_friction.copy(),
    }
    return morph


def apply_dynamics(morph: Morph, scales: np.ndarray) -> None:
    """Scale damping, friction and armature of each limb by ``scales[i, (0, 1, 2)]`` (in place, from the base).

    Limb i's damping and armature are those of its actuated dof; its friction is that of every geom on its body.
    """
    m, b = morph.model, morph.base
    m.dof_damping[:] = b["damping"]
    m.dof_armature[:] = b["armature"]
    m.geom_friction[:] = b["friction"]
    for i in range(morph.n_limbs):
        dof = b["dof"][i]
        if dof >= 0:
            m.dof_damping[dof] = b["damping"][dof] * scales[i, 0]
            m.dof_armature[dof] = b["armature"][dof] * scales[i, 2]
        geoms = np.flatnonzero(m.geom_bodyid == morph.body[i])
        m.geom_friction[geoms, 0] = b["friction"][geoms, 0] * scales[i, 1]


def context(morph: Morph) -> np.ndarray:
    """Raw per-limb context (n_limbs, CTX_DIM) in ``CONTEXT_FIELDS`` order, from the current (randomised) model."""
    m = morph.model
    out = np.zeros((morph.n_limbs, CTX_DIM))
    for i in range(morph.n_limbs):
        b, j, a = morph.body[i], morph.joint[i], morph.actuator[i]
        g = int(np.flatnonzero(m.geom_bodyid == b)[0])
        half = m.geom_size[g, 1] if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE else 0.0
        row = [
            np.log(m.body_mass[b]),
            *np.log(m.body_inertia[b] + 1e-6),
            2 * half,
            m.geom_size[g, 0],
            *(m.jnt_range[j] if j >= 0 else (0.0, 0.0)),
            *(m.jnt_axis[j] if j >= 0 else (0.0, 0.0, 0.0)),
            np.log(m.actuator_gear[a, 0]) if a >= 0 else 0.0,
            morph.depth[i],
            np.log(m.dof_damping[m.jnt_dofadr[j]] + 1e-3) if j >= 0 else 0.0,
            np.log(m.geom_friction[g, 0]),
            np.log(m.dof_armature[m.jnt_dofadr[j]] + 1e-4) if j >= 0 else 0.0,
        ]
        out[i] = row
    return out


def limb_observation(morph: Morph, d: mujoco.MjData) -> np.ndarray:
    """Per-limb observation (n_limbs, OBS_DIM) in the torso frame (see module docstring)."""
    ids, ix = morph.body, morph.index
    xpos = d.xpos[ids]  # (n, 3)
    xmat = d.xmat[ids]  # (n, 9) row-major rotation matrices
    r_torso = xmat[0].reshape(3, 3)
    out = np.empty((len(ids), OBS_DIM))
    out[:, 0:3] = (xpos - xpos[0]) @ r_torso  # R^T (p − p_torso), row form
    # cvel = [ω, v] at the subtree com of the root; velocity of the body origin: v + ω × (p − c)
    cvel = d.cvel[ids]
    w, r = cvel[:, :3], xpos - d.subtree_com[ix["root"]]
    lin = cvel[:, 3:] + np.stack(
        [
            w[:, 1] * r[:, 2] - w[:, 2] * r[:, 1],
            w[:, 2] * r[:, 0] - w[:, 0] * r[:, 2],
            w[:, 0] * r[:, 1] - w[:, 1] * r[:, 0],
        ],
        axis=1,
    )
    out[:, 3] = xmat[:, 2]  # sin(pitch) = R[0, 2]
    out[:, 4] = xmat[:, 0]  # cos(pitch) = R[0, 0]
    out[:, 5] = xpos[:, 2]
    out[:, 6:9] = np.clip(lin @ r_torso, -10, 10)
    out[:, 9:12] = np.clip(w @ r_torso, -10, 10)
    out[:, 12:14] = 0.0
    act = ix["act"]
    lo, span = ix["lo"], ix["span"]
    out[act, 12] = np.clip(2 * (d.qpos[ix["qpos"]] - lo) / span - 1, -1, 1)
    out[act, 13] = np.clip(d.qvel[ix["dof"]], -100, 100) / 10
    return out


def all_morphs(families: list[str] | None = None) -> list[Morph]:
    """Every SMP robot of the given families (all four by default), compiled in MuJoCo ≥ 4."""
    fams = families or list(FAMILIES)
    return [make_morph(n) for n in smp_names() if family_of(n) in fams]

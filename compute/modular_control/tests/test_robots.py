"""Robots: the global→local converter, the limb graph, every morphology stepping, randomisation, splits."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest

from compute.modular_control.convert import ASSETS, global_names, load_xml_text, smp_names
from compute.modular_control.envs import BatchEnv, DynamicsRange
from compute.modular_control.morph import (
    CONTEXT_FIELDS,
    FAMILIES,
    HIDDEN_FIELDS,
    apply_dynamics,
    build_model,
    limb_observation,
    make_morph,
    split_names,
    visible_mask,
)

FIXTURES = json.loads((ASSETS.parent / "fixtures_mujoco232.json").read_text())


def test_asset_counts() -> None:
    assert len(smp_names()) == 38
    assert len(global_names()) == 15  # every walker and hopper
    assert FIXTURES["mujoco"] == "2.3.2"
    assert sorted(FIXTURES["robots"]) == global_names()


@pytest.mark.parametrize("name", global_names())
def test_converter_preserves_body_positions(name: str) -> None:
    """Converted XML in MuJoCo 4 gives mujoco 2.3.2's xpos of the global original, at qpos0 and a random pose."""
    rec = FIXTURES["robots"][name]
    m = mujoco.MjModel.from_xml_string(load_xml_text(name))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert np.abs(d.xpos - np.array(rec["xpos0"])).max() < 1e-9
    assert np.abs(d.xquat - np.array(rec["xquat0"])).max() < 1e-9
    d.qpos[:] = rec["qpos_rand"]
    mujoco.mj_forward(m, d)
    assert np.abs(d.xpos - np.array(rec["xpos_rand"])).max() < 1e-9
    assert np.abs(m.body_mass - np.array(rec["body_mass"])).max() < 1e-9


@pytest.mark.parametrize("name", smp_names())
def test_limb_graph(name: str) -> None:
    """#actuated limbs = nu, torso + actuated = #bodies, DFS order identical across reloads, parents precede."""
    a, b = make_morph(name), make_morph(name)
    m = a.model
    assert int((a.actuator >= 0).sum()) == m.nu
    assert a.n_limbs == m.nbody - 1 and a.actuator[0] == -1
    assert np.array_equal(a.body, b.body) and np.array_equal(a.joint, b.joint)
    assert all(a.parent[i] < i for i in range(1, a.n_limbs))
    assert a.frame_skip * m.opt.timestep == pytest.approx(0.04)  # same control period for every family


def test_every_morphology_loads_and_steps() -> None:
    names = smp_names()
    env = BatchEnv(names, n_slots=len(names), seed=0, episode_len=5)
    out = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(3):
        out = env.step(rng.uniform(-1, 1, (len(names), 9)))
        assert np.all(np.isfinite(out["obs"])) and np.all(np.isfinite(out["reward"]))
    assert sorted(env.slot_morph.tolist()) == list(range(len(names)))


def test_dynamics_scaling_is_exact() -> None:
    """Randomisation multiplies dof_damping, geom_friction and dof_armature by exactly the sampled factors."""
    morph = make_morph("cheetah_7_full").clone()
    base = {k: v.copy() for k, v in morph.base.items()}
    scales = DynamicsRange().sample(np.random.default_rng(1), (morph.n_limbs, 3))
    apply_dynamics(morph, scales)
    m = morph.model
    for i in range(1, morph.n_limbs):
        dof = base["dof"][i]
        assert m.dof_damping[dof] == pytest.approx(base["damping"][dof] * scales[i, 0], rel=1e-12)
        assert m.dof_armature[dof] == pytest.approx(base["armature"][dof] * scales[i, 2], rel=1e-12)
        geoms = np.flatnonzero(m.geom_bodyid == morph.body[i])
        np.testing.assert_allclose(m.geom_friction[geoms, 0], base["friction"][geoms, 0] * scales[i, 1], rtol=1e-12)
    assert np.all((scales >= 0.7) & (scales <= 1.3))
    ood = DynamicsRange(ood=True).sample(np.random.default_rng(2), (1000, 3))
    assert np.all(((ood >= 0.4) & (ood < 0.7)) | ((ood > 1.3) & (ood <= 1.6)))


def test_splits_disjoint_and_hidden_fields_hidden() -> None:
    for seed in range(3):
        train, test = split_names(list(FAMILIES), seed)
        assert not set(train) & set(test)
        assert sorted(train + test) == smp_names()
        for fam in FAMILIES:
            assert any(n.startswith(fam) for n in train)
    vis = visible_mask()
    hidden = [CONTEXT_FIELDS.index(f) for f in HIDDEN_FIELDS]
    assert not vis[hidden].any() and vis.sum() == len(CONTEXT_FIELDS) - 3
    assert visible_mask(("damping",))[CONTEXT_FIELDS.index("damping")]


def test_limb_lengths_scale_and_robot_stands() -> None:
    """×1.3 limbs: the thigh capsule is 1.3× longer and the lowest point keeps its clearance."""
    base, long = build_model("walker_7_main"), build_model("walker_7_main", np.full(9, 1.3))
    g = mujoco.mj_name2id(base, mujoco.mjtObj.mjOBJ_GEOM, "left1_geom")
    assert long.geom_size[g, 1] == pytest.approx(1.3 * base.geom_size[g, 1])
    d0, d1 = mujoco.MjData(base), mujoco.MjData(long)
    mujoco.mj_forward(base, d0)
    mujoco.mj_forward(long, d1)
    low = lambda m, d: min(d.geom_xpos[i, 2] - m.geom_size[i, 0] for i in range(1, m.ngeom))  # noqa: E731
    assert low(long, d1) == pytest.approx(low(base, d0), abs=0.05)
    assert d1.xpos[1, 2] > d0.xpos[1, 2] + 0.2


def test_observation_is_in_the_torso_frame() -> None:
    """Pitching the whole robot leaves the relative limb positions and joint angles unchanged (torso frame)."""
    morph = make_morph("walker_4_main")
    m = morph.model
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    o0 = limb_observation(morph, d)
    d.qpos[2] = 0.4  # root pitch
    mujoco.mj_forward(m, d)
    o1 = limb_observation(morph, d)
    np.testing.assert_allclose(o1[:, 0:3], o0[:, 0:3], atol=1e-9)
    np.testing.assert_allclose(o1[:, 12], o0[:, 12], atol=1e-12)
    assert o1[0, 3] == pytest.approx(np.sin(0.4), abs=1e-9)  # torso pitch (sin)

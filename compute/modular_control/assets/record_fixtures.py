"""Record body positions of the global-coordinate SMP XMLs with mujoco 2.3.2 (run once, in a throwaway venv).

    python -m venv /tmp/mj232 && /tmp/mj232/bin/pip install mujoco==2.3.2 numpy
    /tmp/mj232/bin/python compute/modular_control/assets/record_fixtures.py

For each of the 15 walker/hopper files: xpos and xquat after mj_forward at qpos0 and at a seeded random qpos,
written to assets/fixtures_mujoco232.json.  The cleaning step (includes, materials, hopper typo) is the same
regex as convert.clean_xml, duplicated here because this script must run without the project's imports.
"""

import json
import re
from pathlib import Path

import mujoco
import numpy as np

HERE = Path(__file__).resolve().parent


def clean(text: str) -> str:
    text = re.sub(r"<include[^>]*/>", "", text)
    text = re.sub(r'\smaterial="[^"]*"', "", text)
    return text.replace('"0.13/2 ', '"0.065 ')


out = {"mujoco": mujoco.__version__, "robots": {}}
for path in sorted((HERE / "smp").glob("*.xml")):
    text = path.read_text()
    if 'coordinate="global"' not in text:
        continue
    m = mujoco.MjModel.from_xml_string(clean(text))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    rec = {"body_names": [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, i) for i in range(m.nbody)]}
    mujoco.mj_forward(m, d)
    rec["xpos0"] = d.xpos.tolist()
    rec["xquat0"] = d.xquat.tolist()
    qpos = m.qpos0 + rng.uniform(-0.3, 0.3, m.nq)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    rec["qpos_rand"] = qpos.tolist()
    rec["xpos_rand"] = d.xpos.tolist()
    rec["body_mass"] = m.body_mass.tolist()
    out["robots"][path.stem] = rec
(HERE / "fixtures_mujoco232.json").write_text(json.dumps(out))
print(len(out["robots"]), "robots recorded with mujoco", mujoco.__version__)

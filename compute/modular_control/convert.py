"""SMP XML clean-up and the global → local coordinate converter (MuJoCo ≥ 2.3.3 rejects coordinate="global").

The 15 walker and hopper XMLs of SMP (modular-mujoco-envs 1.5, MIT) give every body, geom, joint and camera
position in world coordinates.  None of them rotates a body frame (no quat/euler/axisangle on bodies), so every
body frame is world-aligned and the conversion is a pure translation:

    body.pos_local  = body.pos_global  − parent.pos_global
    elem.pos_local  = elem.pos_global  − body.pos_global        (geom pos, joint pos, camera pos, site pos)
    geom.fromto_loc = geom.fromto_glob − (body.pos_global, body.pos_global)

Axes (joint axis, camera xyaxes) are unchanged under a translation.  The converter refuses files whose bodies
carry an orientation, so a silent mistake is impossible.  ``tests/test_convert.py`` checks the converted models
against body positions recorded with mujoco 2.3.2 (``assets/fixtures_mujoco232.json``) to 1e-9.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

ASSETS = Path(__file__).resolve().parent / "assets" / "smp"
_ORIENT = ("quat", "euler", "axisangle", "xyaxes", "zaxis")


def _vec(s: str) -> np.ndarray:
    return np.array([float(x) for x in s.split()], dtype=np.float64)


def _fmt(v: np.ndarray) -> str:
    return " ".join(repr(float(x)) for x in v)


def clean_xml(text: str) -> str:
    """Drop the ``<include>`` of SMP's skybox/visual/material files and every ``material=`` reference.

    Also fixes the hopper typo ``pos="0.13/2 0 0.6"`` (read as its intent, 0.065; design choice).
    The physics is untouched: materials only colour the rendering.
    """
    text = re.sub(r"<include[^>]*/>", "", text)
    text = re.sub(r'\smaterial="[^"]*"', "", text)
    return text.replace('"0.13/2 ', '"0.065 ')


def global_to_local(text: str) -> str:
    """Rewrite a coordinate="global" MJCF string into local coordinates (see module docstring)."""
    root = ET.fromstring(text)
    compiler = root.find("compiler")
    if compiler is None or compiler.get("coordinate", "local") != "global":
        return text
    del compiler.attrib["coordinate"]
    world = root.find("worldbody")
    if world is None:
        raise ValueError("no worldbody")

    def visit(body: ET.Element, origin: np.ndarray) -> None:
        for child in list(body):
            if child.tag == "body":
                if any(k in child.attrib for k in _ORIENT):
                    raise ValueError(f"body {child.get('name')!r} is rotated; only translations are supported")
                pos_g = _vec(child.get("pos", "0 0 0"))
                child.set("pos", _fmt(pos_g - origin))
                visit(child, pos_g)
            elif child.tag in ("geom", "joint", "camera", "site", "light", "inertial"):
                if body is world:
                    continue  # worldbody frame = world frame
                if "pos" in child.attrib:
                    child.set("pos", _fmt(_vec(child.get("pos")) - origin))
                if child.tag == "geom" and "fromto" in child.attrib:
                    child.set("fromto", _fmt(_vec(child.get("fromto")) - np.concatenate([origin, origin])))

    visit(world, np.zeros(3))
    return ET.tostring(root, encoding="unicode")


def load_xml_text(name: str) -> str:
    """The cleaned, local-coordinate MJCF of one SMP robot (e.g. ``"walker_7_main"``)."""
    return global_to_local(clean_xml((ASSETS / f"{name}.xml").read_text()))


def smp_names() -> list[str]:
    """All 38 SMP robots, sorted."""
    return sorted(p.stem for p in ASSETS.glob("*.xml"))


def global_names() -> list[str]:
    """The robots whose original XML uses coordinate="global" (walkers and hoppers: 15)."""
    return [n for n in smp_names() if 'coordinate="global"' in (ASSETS / f"{n}.xml").read_text()]

"""E3 — inspect a policy on held-out scenes (spec steer §3 E3).

The policy is the SFT checkpoint itself or the final weights an E1 run kept (``run.save_policy``:
``data_dir/steer/policies/<name>.pt``, which records the SFT configuration it started from).  On ``n_scenes``
held-out scenes (default 1,000; the test split of the run's seed) it reports the per-tier table, the route × tier
confusion and the p_c histogram, and draws a Plotly bird's-eye viewer of ``n_view`` scenes (as even across the
tiers as the scenes allow): lanes, lane closure, stop line, every agent's 4-s track, the ego's decoded plan and
the expert's, with the scene prompt and the policy's response (CoT text included) under the plot; a slider steps
through the scenes.  Read-only: nothing is trained or written.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import torch

from compute.steer.evaluate import RouteHead, attach_route_head, rollout_eval, spearman, summarise
from compute.steer.scenes import TIERS
from compute.steer.sft import SteerSFTConfig, load_or_build
from compute.steer.sim import (
    CAR_L,
    CAR_W,
    LANE_W,
    N_LANES,
    SUB,
    Scene,
    agent_tracks,
    light_phase,
    plan_ids,
    rollout_ego,
)
from compute.steer.traces import DIRECT, THINK, parse_plan

POLICY_DIR = "steer/policies"  # same folder as run.save_policy
LIGHT_COLORS = {0: "#2ca02c", 1: "#e6b800", 2: "#d62728"}
TIER_COLORS = {"easy": "#2ca02c", "medium": "#ff7f0e", "hard": "#d62728"}
ROUTES = {"router": None, "always_cot": THINK, "never_cot": DIRECT}


def list_policies(data_dir: str | Path) -> list[str]:
    d = Path(data_dir) / POLICY_DIR
    return sorted(p.stem for p in d.glob("*.pt")) if d.is_dir() else []


def load_policy(name: str, data_dir: str | Path, reporter: Any = None, device: str = "cpu") -> tuple[Any, Any, dict]:
    """(model, task, info) for ``name``: the SFT checkpoint of the policy's own recorded SFT config with the
    policy's weights loaded.  A missing name raises ValueError listing the saved policies."""
    path = Path(data_dir) / POLICY_DIR / f"{name}.pt"
    if not path.exists():
        have = list_policies(data_dir)
        raise ValueError(
            f"no saved policy {name!r} under {Path(data_dir) / POLICY_DIR}; "
            + (f"saved: {', '.join(have)}" if have else "none saved yet (every E1 route_rl run keeps its final policy)")
        )
    blob = torch.load(path, map_location=device, weights_only=False)
    res = load_or_build(SteerSFTConfig(**blob["sft"]), data_dir, reporter, device)
    res.model.load_state_dict(blob["state_dict"])
    if "route_head" in blob:
        head = RouteHead(blob["route_head"]["centre"])
        head.load_state_dict(blob["route_head"])
        attach_route_head(res.model, head)
    res.model.eval()
    return res.model, res.task, {"params": blob["params"], "summary": blob["summary"], "sft": res.path.name}


def pick_view(tiers: list[str], n_view: int) -> list[int]:
    """Indices of ``n_view`` scenes taken round-robin over the tiers in scene order (even across tiers when each
    tier has enough scenes; the others fill in)."""
    by = {t: [i for i, x in enumerate(tiers) if x == t] for t in TIERS}
    out: list[int] = []
    k = 0
    while len(out) < min(n_view, len(tiers)):
        for t in TIERS:
            if k < len(by[t]) and len(out) < n_view:
                out.append(by[t][k])
        k += 1
    return out


def _car(x: float, y: float, name: str, line: str, fill: str, group: str | None = None) -> dict[str, Any]:
    """A vehicle's CAR_L × CAR_W box centred at (x, y) as a filled Plotly trace."""
    hx, hy = CAR_L / 2, CAR_W / 2
    return {
        "type": "scatter",
        "x": [x - hx, x + hx, x + hx, x - hx, x - hx],
        "y": [y - hy, y - hy, y + hy, y + hy, y - hy],
        "fill": "toself",
        "mode": "lines",
        "line": {"color": line},
        "fillcolor": fill,
        "name": name,
        **({"legendgroup": group} if group else {}),
    }


def scene_traces(scene: Scene, plan: list[str] | None, expert: list[str]) -> list[dict[str, Any]]:
    """Plotly traces of one scene's bird's-eye view (x forward, y lateral; lane i centred at 3.5·i): closure,
    stop line, agents (box now + track with a marker every 0.5 s), the expert's plan (dashed) and the policy's
    plan (its end point is the simulator's ``rollout_ego``)."""
    out: list[dict[str, Any]] = []
    marks = slice(None, None, SUB)  # the 0.5-s plan-step boundaries
    if scene.closure is not None:
        lane, x0 = scene.closure
        y0, y1 = LANE_W * lane - LANE_W / 2, LANE_W * lane + LANE_W / 2
        out.append(
            {
                "type": "scatter",
                "x": [x0, x0 + 200, x0 + 200, x0, x0],
                "y": [y0, y0, y1, y1, y0],
                "fill": "toself",
                "mode": "lines",
                "line": {"width": 0},
                "fillcolor": "rgba(120,120,120,0.35)",
                "name": f"lane {lane} closed",
                "hoverinfo": "name",
            }
        )
    if scene.light is not None:
        phase, left, x_line = scene.light
        c = LIGHT_COLORS[int(light_phase(scene.light, np.array([0.0]))[0])]
        out.append(
            {
                "type": "scatter",
                "x": [x_line, x_line],
                "y": [-LANE_W / 2, LANE_W * (N_LANES - 0.5)],
                "mode": "lines",
                "line": {"color": c, "width": 4},
                "name": f"light {phase} ({left:g} s left)",
            }
        )
    tr = agent_tracks(scene)
    for i, a in enumerate(scene.agents):
        label = f"a{i + 1} {a.kind} v{a.v:g}"
        out.append(_car(float(tr["x"][i, 0]), float(tr["y"][i, 0]), label, "#555", "rgba(90,90,90,0.5)", f"a{i}"))
        out.append(
            {
                "type": "scatter",
                "x": tr["x"][i][marks].tolist(),
                "y": tr["y"][i][marks].tolist(),
                "mode": "lines+markers",
                "line": {"color": "#888", "width": 1},
                "marker": {"size": 4},
                "name": label + " track",
                "legendgroup": f"a{i}",
                "showlegend": False,
            }
        )
    out.append(_car(0.0, LANE_W * scene.ego_lane, f"ego v{scene.ego_v:g}", "#1f77b4", "rgba(31,119,180,0.5)"))
    for name, p, style in (("expert plan", expert, {"dash": "dash", "color": "#333"}), ("policy plan", plan, {})):
        if p is None:
            continue
        e = rollout_ego(scene, plan_ids(p)[None])
        out.append(
            {
                "type": "scatter",
                "x": e["x"][0][marks].tolist(),
                "y": e["y"][0][marks].tolist(),
                "mode": "lines+markers",
                "line": {"width": 2, **(style or {"color": "#1f77b4"})},
                "marker": {"size": 5},
                "text": ["start", *p],
                "name": f"{name}: {' '.join(p)}",
            }
        )
    return out


def _display(text: str, width: int = 110) -> str:
    """Route tokens as ⟨think⟩ / ⟨direct⟩ (Plotly would read <think> as a tag), wrapped with <br>."""
    t = text.replace(THINK, "⟨think⟩").replace(DIRECT, "⟨direct⟩")
    return "<br>".join(textwrap.wrap(t, width)) or "(empty)"


def viewer_figure(items: list[dict[str, Any]]) -> dict[str, Any]:
    """One figure for several scenes: each scene's traces, a slider whose step i shows only scene i's traces and
    sets the title and the prompt / response annotation.  ``items``: scene, plan (or None), expert, title,
    prompt, response."""
    data: list[dict[str, Any]] = []
    owner: list[int] = []
    for k, it in enumerate(items):
        tr = scene_traces(it["scene"], it["plan"], it["expert"])
        data += tr
        owner += [k] * len(tr)
    owner_a = np.array(owner)

    def ann(it: dict[str, Any]) -> list[dict[str, Any]]:
        txt = "<b>scene</b> " + _display(it["prompt"]) + "<br><b>response</b> " + _display(it["response"])
        return [
            {
                "text": txt,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": -0.22,
                "xanchor": "left",
                "yanchor": "top",
                "align": "left",
                "showarrow": False,
                "font": {"family": "monospace", "size": 10},
            }
        ]

    steps = [
        {
            "label": str(k + 1),
            "method": "update",
            "args": [{"visible": (owner_a == k).tolist()}, {"title": {"text": it["title"]}, "annotations": ann(it)}],
        }
        for k, it in enumerate(items)
    ]
    for i, d in enumerate(data):
        d["visible"] = bool(owner_a[i] == 0)
    road = [
        {
            "type": "line",
            "x0": -30,
            "x1": 130,
            "y0": LANE_W * (b - 0.5),
            "y1": LANE_W * (b - 0.5),
            "line": {
                "color": "#444" if b in (0, N_LANES) else "#bbb",
                "width": 2 if b in (0, N_LANES) else 1,
                "dash": "solid" if b in (0, N_LANES) else "dash",
            },
            "layer": "below",
        }
        for b in range(N_LANES + 1)
    ]
    layout = {
        "title": {"text": items[0]["title"] if items else "no scenes"},
        "height": 560,
        "margin": {"l": 55, "r": 15, "t": 50, "b": 230},
        "xaxis": {"title": "metres ahead of the ego (x)", "range": [-30, 130], "zeroline": False},
        "yaxis": {
            "title": "lane (0 = left)",
            "autorange": "reversed",
            "tickvals": [LANE_W * i for i in range(N_LANES)],
            "ticktext": [str(i) for i in range(N_LANES)],
            "zeroline": False,
        },
        "shapes": road,
        "annotations": ann(items[0]) if items else [],
        "sliders": [{"active": 0, "steps": steps, "currentvalue": {"prefix": "scene "}, "pad": {"t": 190}}],
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "font": {"size": 9}},
    }
    return {"data": data, "layout": layout}


def pc_hist_fig(rows: list[dict[str, Any]], title: str = "p_c") -> dict[str, Any]:
    """Overlaid p_c histograms per hidden tier (E1's final panel and E3's)."""
    data = [
        {
            "type": "histogram",
            "name": t,
            "x": [r["p_c"] for r in rows if r["tier"] == t],
            "xbins": {"start": 0, "end": 1.0001, "size": 0.05},
            "marker": {"color": TIER_COLORS[t]},
            "opacity": 0.6,
        }
        for t in TIERS
    ]
    return {"data": data, "layout": {"barmode": "overlay", "xaxis": {"title": title}}}


def inspect_policy(
    model: Any, task: Any, problems: list[Any], route: str | None, max_new: int, n_view: int
) -> dict[str, Any]:
    """Greedy held-out evaluation with the texts kept; the tables and figures of E3 as plain data."""
    rows = rollout_eval(model, task, problems, route, max_new, keep_text=True)
    s = summarise(rows)
    per_tier = [
        {
            "tier": t,
            "scenes": sum(1 for r in rows if t in ("all", r["tier"])),
            "epdms": s.get(f"epdms_{t}"),
            "pdms": s.get(f"pdms_{t}"),
            "cot_ratio": s.get(f"cot_{t}"),
            "p_c": s.get(f"pc_{t}"),
            "tokens": s.get(f"tokens_{t}"),
            "expert_epdms": float(
                np.mean(
                    [
                        p.data["analysis"].expert_score
                        for p, r in zip(problems, rows, strict=True)
                        if t in ("all", r["tier"])
                    ]
                    or [np.nan]
                )
            ),
        }
        for t in ("all", *TIERS)
    ]
    confusion = [
        {"route": route_tok, **{t: sum(1 for r in rows if r["tier"] == t and r["route"] == route_tok) for t in TIERS}}
        for route_tok in (THINK, DIRECT)
    ]
    items = []
    for i in pick_view([r["tier"] for r in rows], n_view):
        p, r = problems[i], rows[i]
        _, plan = parse_plan(r["text"])
        items.append(
            {
                "scene": p.data["scene"],
                "plan": plan,
                "expert": p.data["analysis"].expert.actions(),
                "title": f"{r['tier']} scene · route {(r['route'] or '?').strip('<>')} · p_c {r['p_c']:.2f} · "
                f"EPDMS {r['epdms']:.3f} (expert {p.data['analysis'].expert_score:.3f}) · {r['tokens']} tokens",
                "prompt": p.question,
                "response": r["text"],
            }
        )
    tier_idx = np.array([TIERS.index(r["tier"]) for r in rows])
    return {
        "rows": rows,
        "summary": s,
        "per_tier": per_tier,
        "confusion": confusion,
        "viewer": viewer_figure(items),
        "hist": pc_hist_fig(rows),
        "spearman": spearman(tier_idx, np.array([r["p_c"] for r in rows])),
        "scenes": [
            {"tier": it["title"].split()[0], "prompt": it["prompt"], "response": it["response"]} for it in items
        ],
    }


def audit_fig(rows: list[dict[str, Any]], lam: float) -> dict[str, Any]:
    """Route audit: per scene kind the net Δ (± SE) as bars coloured by tier, and the router's CoT ratio."""
    x = [f"{r['tier']} · {r['kind']}" for r in rows]
    return {
        "data": [
            {
                "type": "bar",
                "x": x,
                "y": [r["delta"] for r in rows],
                "error_y": {"type": "data", "array": [r["delta_se"] for r in rows]},
                "marker": {"color": [TIER_COLORS[r["tier"]] for r in rows]},
                "name": f"Δ = CoT − direct − {lam:g}·Δtokens (sampled)",
            },
            {
                "type": "scatter",
                "mode": "markers",
                "x": x,
                "y": [r["policy_cot_ratio"] for r in rows],
                "yaxis": "y2",
                "marker": {"symbol": "diamond", "size": 10, "color": "#333"},
                "name": "router's CoT ratio",
            },
        ],
        "layout": {
            "yaxis": {"title": "net Δ (score)", "zeroline": True},
            "yaxis2": {"title": "CoT ratio", "overlaying": "y", "side": "right", "range": [0, 1.05]},
            "legend": {"orientation": "h", "y": -0.3},
        },
    }

"""Plain Plotly-JSON figures (dicts) for the scene viewer, heatmaps and μ curves — no Plotly import in compute."""

from __future__ import annotations

import math
from typing import Any

import torch


def replay_figure(
    route: torch.Tensor, traj: torch.Tensor, alive: torch.Tensor, title: str = "episode replay"
) -> dict[str, Any]:
    """Top-down animation of one world: route [A, N, 2], trajectory [T, A, 3] (x, y, ψ), alive mask [T, A]."""
    A = route.shape[0]
    data: list[dict[str, Any]] = []
    for a in range(A):
        data.append(
            {
                "type": "scatter",
                "x": route[a, :, 0].tolist(),
                "y": route[a, :, 1].tolist(),
                "mode": "lines",
                "line": {"color": "lightgrey", "width": 10},
                "hoverinfo": "skip",
                "showlegend": False,
            }
        )
    goals = route[:, -1]
    data.append(
        {
            "type": "scatter",
            "x": goals[:, 0].tolist(),
            "y": goals[:, 1].tolist(),
            "mode": "markers",
            "marker": {"symbol": "star", "size": 12, "color": "gold"},
            "name": "goals",
        }
    )

    def frame_trace(t: int) -> dict[str, Any]:
        m = alive[t]
        xs, ys, ps = traj[t, :, 0], traj[t, :, 1], traj[t, :, 2]
        return {
            "type": "scatter",
            "x": xs.tolist(),
            "y": ys.tolist(),
            "mode": "markers",
            "name": "vehicles",
            "marker": {
                "symbol": "arrow",
                "size": 16,
                "angle": [90 - math.degrees(float(p)) for p in ps],
                "color": ["royalblue" if bool(v) else "grey" for v in m],
            },
            "text": [f"agent {a}" for a in range(A)],
        }

    data.append(frame_trace(0))
    idx = len(data) - 1
    frames = [{"name": str(t), "data": [frame_trace(t)], "traces": [idx]} for t in range(traj.shape[0])]
    steps = [
        {"label": str(t), "method": "animate", "args": [[str(t)], {"mode": "immediate", "frame": {"duration": 0}}]}
        for t in range(0, traj.shape[0], max(1, traj.shape[0] // 30))
    ]
    layout = {
        "title": title,
        "xaxis": {"scaleanchor": "y", "title": "x [m]"},
        "yaxis": {"title": "y [m]"},
        "updatemenus": [
            {
                "type": "buttons",
                "buttons": [
                    {
                        "label": "play",
                        "method": "animate",
                        "args": [None, {"frame": {"duration": 60}, "fromcurrent": True}],
                    },
                    {
                        "label": "pause",
                        "method": "animate",
                        "args": [[None], {"mode": "immediate", "frame": {"duration": 0}}],
                    },
                ],
            }
        ],
        "sliders": [{"steps": steps}],
    }
    return {"data": data, "layout": layout, "frames": frames}


def trajectories_figure(route: torch.Tensor, trajs: dict[str, torch.Tensor], title: str) -> dict[str, Any]:
    """Overlay of trajectories [T, A, 3] of several policies on the same scene (route [A, N, 2])."""
    colors = ["royalblue", "crimson", "seagreen", "darkorange"]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": route[a, :, 0].tolist(),
            "y": route[a, :, 1].tolist(),
            "mode": "lines",
            "line": {"color": "lightgrey", "width": 10},
            "showlegend": False,
            "hoverinfo": "skip",
        }
        for a in range(route.shape[0])
    ]
    for i, (name, tr) in enumerate(trajs.items()):
        for a in range(tr.shape[1]):
            data.append(
                {
                    "type": "scatter",
                    "x": tr[:, a, 0].tolist(),
                    "y": tr[:, a, 1].tolist(),
                    "mode": "lines",
                    "line": {"color": colors[i % len(colors)], "width": 2},
                    "name": name,
                    "legendgroup": name,
                    "showlegend": a == 0,
                }
            )
    return {
        "data": data,
        "layout": {"title": title, "xaxis": {"scaleanchor": "y", "title": "x [m]"}, "yaxis": {"title": "y [m]"}},
    }


def heatmap(z: list[list[float]], x: list[str], y: list[str], title: str, zmax: float = 1.0) -> dict[str, Any]:
    text = [[f"{v:.2f}" for v in row] for row in z]
    return {
        "data": [
            {
                "type": "heatmap",
                "z": z,
                "x": x,
                "y": y,
                "zmin": 0.0,
                "zmax": zmax,
                "colorscale": "Viridis",
                "text": text,
                "texttemplate": "%{text}",
            }
        ],
        "layout": {"title": title, "xaxis": {"title": "evaluated on"}, "yaxis": {"title": "trained on"}},
    }

"""The spec's rollout row from two ``bench/steer_rl.py`` run JSONs: the quota against ``on_policy``.

    PYTHONPATH=. .venv/bin/python bench/steer_rollout_row.py QUOTA.json ON_POLICY.json [--window 10] [--big 2000]

Prints, per run: the mean fraction of two-route groups over the training steps (``route/two_route_groups``), the
first in-training evaluation step whose greedy easy-tier CoT ratio (``eval/cot_easy``) is below 0.3, the first
training step whose trailing ``--window``-step mean of the easy scenes' router belief (``route/pc_easy``) is below
0.3 (a finer clock than the evaluations every ``eval_every`` steps), and the final evaluation's CoT per tier and
tokens.  The row (spec steer §4) is met where the quota has the higher two-route fraction and reaches easy CoT < 0.3
in fewer steps.  With ``--big N``, where ``bench/steer_bigeval.py`` has scored both runs on N held-out scenes
(``<run dir>/big<N>/<run name>``), it also prints the paired quota − on-policy PDMS on those scenes and the
evaluation standard error of the paired difference (not part of the row: the quota's effect on the score).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from steer_bigeval import eval_se, paired_pdms  # the sibling script (bench/ is on sys.path when a bench script runs)


def first_below(steps: list[int], values: list[float], level: float = 0.3, window: int = 1) -> int | None:
    """The first step whose trailing ``window``-point mean of ``values`` is below ``level`` (None: never)."""
    v = np.asarray(values, dtype=float)
    for i in range(len(v)):
        if v[max(0, i - window + 1) : i + 1].mean() < level:
            return int(steps[i])
    return None


def row(path: Path, window: int) -> dict:
    blob = json.loads(path.read_text())
    ser, s = blob["series"], blob["summary"]
    two = ser["route/two_route_groups"]["values"]
    ev = ser["eval/cot_easy"]
    pc = ser["route/pc_easy"]
    return {
        "run": str(path),
        "rollout": blob["params"].get("rollout", "uncertainty"),
        "two_route_mean": float(np.mean(two)),
        "two_route_first50": float(np.mean(two[:50])),
        "eval_easy_cot_below_0.3": first_below(ev["steps"], ev["values"]),
        "pc_easy_below_0.3": first_below(pc["steps"], pc["values"], window=window),
        "cot_easy_medium_hard": [round(s[f"cot_{t}"], 3) for t in ("easy", "medium", "hard")],
        "tokens": round(s["tokens"], 2),
        "pdms": round(s["pdms"], 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("quota", type=Path)
    ap.add_argument("on_policy", type=Path)
    ap.add_argument("--window", type=int, default=10)
    ap.add_argument("--big", type=int, metavar="N", help="also print quota − on-policy PDMS on N scored scenes")
    a = ap.parse_args()
    rows = [row(a.quota, a.window), row(a.on_policy, a.window)]
    for r in rows:
        print(json.dumps(r))
    q, o = rows
    never = float("inf")
    q_eval, o_eval = (r["eval_easy_cot_below_0.3"] or never for r in rows)
    q_pc, o_pc = (r["pc_easy_below_0.3"] or never for r in rows)
    faster = q_eval < o_eval or (q_eval == o_eval and q_pc < o_pc)
    more = q["two_route_mean"] > o["two_route_mean"]
    print(f"two-route groups: quota {q['two_route_mean']:.3f} vs on-policy {o['two_route_mean']:.3f} ({more=})")
    steps = {
        k: "never" if v == never else int(v) for k, v in (("qe", q_eval), ("qp", q_pc), ("oe", o_eval), ("op", o_pc))
    }
    print(
        f"steps to easy CoT < 0.3 (eval; p_c): quota {steps['qe']}; {steps['qp']} "
        f"vs on-policy {steps['oe']}; {steps['op']} ({faster=})"
    )
    print("rollout row met" if more and faster else "rollout row not met")
    if a.big:
        q_s, o_s = (
            json.loads((p.parent / f"big{a.big}" / p.name).read_text())["scenes"] for p in (a.quota, a.on_policy)
        )
        d = paired_pdms(q_s, o_s)
        print(f"quota − on-policy PDMS on {a.big} scenes: {d.mean():+.4f} (eval SE {eval_se(d):.4f})")


if __name__ == "__main__":
    main()

"""Gather the JSON summaries that ``bench/steer_rl.py`` wrote (one or more OUT directories, e.g. one per λ) into
one E2 table and mark the Pareto front of EPDMS-lite against mean generated tokens.

    PYTHONPATH=. .venv/bin/python bench/steer_front.py OUT_A OUT_B ...

Prints a Markdown table (method, λ, seed, score, tokens, hard-tier score, greedy CoT ratio per tier, Spearman,
front) per seed, the front computed among the runs of that seed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from compute.steer.config import METHOD_LABELS
from compute.steer.run import pareto_front

LAMBDA_METHODS = ("steer", "length_penalty", "grpo")  # AdaThink-style ignores λ (a fixed ±bonus)


def load(dirs: list[str]) -> list[dict]:
    rows = []
    for d in dirs:
        for path in sorted(Path(d).glob("*.json")):
            blob = json.loads(path.read_text())
            p, s = blob["params"], blob["summary"]
            rows.append(
                {
                    "method": p["method"],
                    "lam": float(p.get("lam", 0.0)) if p["method"] in LAMBDA_METHODS else None,
                    "seed": int(p["seed"]),
                    "epdms": float(s["epdms"]),
                    "pdms": float(s["pdms"]),
                    "tokens": float(s["tokens"]),
                    "hard": float(s["epdms_hard"]),
                    "cot": (float(s["cot_easy"]), float(s["cot_medium"]), float(s["cot_hard"])),
                    "spearman": float(s["spearman_tier_pc"]),
                    "minutes": float(blob.get("wall_s", 0.0)) / 60,
                }
            )
    return rows


def main() -> None:
    rows = load(sys.argv[1:])
    print("| method | λ | seed | EPDMS-lite | tokens | hard | CoT ratio e / m / h | Spearman | front | min |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for seed in sorted({r["seed"] for r in rows}):
        rs = sorted((r for r in rows if r["seed"] == seed), key=lambda r: (r["method"], r["lam"] or 0.0))
        front = set(pareto_front([(r["tokens"], r["epdms"]) for r in rs]))
        for i, r in enumerate(rs):
            lam = "—" if r["lam"] is None else f"{r['lam']:g}"
            cot = " / ".join(f"{c:.2f}" for c in r["cot"])
            print(
                f"| {METHOD_LABELS[r['method']]} | {lam} | {seed} | {r['epdms']:.3f} | {r['tokens']:.1f} | "
                f"{r['hard']:.3f} | {cot} | {r['spearman']:+.2f} | {'yes' if i in front else ''} | {r['minutes']:.0f} |"
            )


if __name__ == "__main__":
    main()

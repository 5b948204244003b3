"""Pool arm comparisons over seeds from the logs of ``bench/seirenes_measure.py arms`` (one log per process).

    PYTHONPATH=. .venv/bin/python bench/seirenes_pool.py [--table] LOG [LOG ...]

Each log's last ``results`` and ``attack`` lines (the per-seed tables) are read and merged over logs: one seed's arms
may come from several logs (the SFT row they share must agree on every fixed suite), but an arm of a seed seen twice
is an error.  For each comparison it prints the per-seed values, the mean, the sample sd and the 95 %
Student-t interval over seeds:

* (c) − (a), (c) − (b), (c) − (d), (d) − (a) on the held-out families, (c) − (a) on random compound hints and on clean problems,
  and (a) − SFT on clean problems, in points;
* transfer: GRPO-clean's drop under (c)'s Adversary's hints divided by its drop under random hints of the same
  grammar (the spec's ≥ 1.5×).

A comparison is printed only for the seeds that have both arms.  ``--table`` first prints each arm's accuracy on
every suite, seed by seed, as a markdown table.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from scipy import stats

A, B, C, D = "(a) GRPO-clean", "(b) GRPO-static", "(c) Seirênes", "(d) frozen Adversary"


def read(paths: list[str]) -> tuple[dict[tuple[str, int], dict], dict[tuple[str, str, int], float]]:
    """(arm label, seed) -> result row, and (victim, source, seed) -> accuracy drop, over all logs."""
    rows: dict[tuple[str, int], dict] = {}
    drops: dict[tuple[str, str, int], float] = {}
    for path in paths:
        last = {}
        for line in open(path, encoding="utf-8"):
            name, _, rest = line.partition(" ")
            if name in ("results", "attack"):
                last[name] = json.loads(rest)
        if "results" not in last:
            raise SystemExit(f"{path}: no 'results' line (did the run finish?)")
        for r in last["results"]:  # a seed's arms may come from several logs; each (arm, seed) only once
            key = (r["arm"], r["seed"])
            if key in rows:
                old = rows[key]
                same = all(old[k] == r[k] for k in r if k != "self_hinted")  # (c)'s hints exist only where (c) ran
                if key[0] != "SFT" or not same:
                    raise SystemExit(f"{path}: {key} already read from another log")
                if old.get("self_hinted") is not None:
                    continue
            rows[key] = r
        drops.update({(a["victim"], a["source"], a["seed"]): a["drop"] for a in last.get("attack", [])})
    return rows, drops


def summarise(label: str, per_seed: dict[int, float], unit: str = "") -> None:
    if not per_seed:
        print(f"{label}: no seed has both arms")
        return
    v = np.array(list(per_seed.values()), dtype=float)
    vals = ", ".join(f"s{s} {x:+.2f}{unit}" for s, x in sorted(per_seed.items()))
    if len(v) < 2:
        print(f"{label}: {vals}")
        return
    sd = v.std(ddof=1)
    half = stats.t.ppf(0.975, len(v) - 1) * sd / np.sqrt(len(v))
    m = v.mean()
    print(f"{label}: {vals} | mean {m:+.2f}{unit} sd {sd:.2f} 95% [{m - half:+.2f}, {m + half:+.2f}] (n {len(v)})")


def diff(rows: dict, x: str, y: str, key: str) -> dict[int, float]:
    seeds = sorted({s for (arm, s) in rows if arm == x} & {s for (arm, s) in rows if arm == y})
    return {s: 100 * (rows[(x, s)][key] - rows[(y, s)][key]) for s in seeds if key in rows[(x, s)]}


def table(rows: dict) -> None:
    """Per arm, each suite's accuracy (%) over the seeds as "s0 / s1 / …" (a markdown row per arm)."""
    seeds = sorted({s for _, s in rows})
    print(
        f"| arm (seed {' / '.join(map(str, seeds))}) | clean | training families | held-out H1/H2 | random compound |"
        " hints of (c)'s Adversary |"
    )
    print("|---|---|---|---|---|---|")
    for arm in ("SFT", A, B, C, D):
        if not any((arm, s) in rows for s in seeds):
            continue
        cells = []
        for k in ("clean", "train_family", "heldout", "train_compound", "self_hinted"):
            vals = [rows.get((arm, s), {}).get(k) for s in seeds]
            cells.append(" / ".join("—" if v is None else f"{100 * v:.1f}" for v in vals))
        print(f"| {arm} | " + " | ".join(cells) + " |")


def main() -> None:
    rows, drops = read([a for a in sys.argv[1:] if a != "--table"])
    if "--table" in sys.argv:
        table(rows)
    summarise("(c) - (a), held-out families", diff(rows, C, A, "heldout"), " pts")
    summarise("(c) - (b), held-out families", diff(rows, C, B, "heldout"), " pts")
    summarise("(c) - (d), held-out families", diff(rows, C, D, "heldout"), " pts")
    summarise("(d) - (a), held-out families", diff(rows, D, A, "heldout"), " pts")
    summarise("(c) - (a), random compound hints", diff(rows, C, A, "train_compound"), " pts")
    summarise("(c) - (a), clean", diff(rows, C, A, "clean"), " pts")
    summarise("(a) - SFT, clean", diff(rows, A, "SFT", "clean"), " pts")  # how far plain GRPO moved off its start
    ratio = {
        s: drops[("clean", "seirenes_adv", s)] / drops[("clean", "random", s)]
        for (v, src, s) in drops
        if v == "clean" and src == "seirenes_adv" and drops.get(("clean", "random", s))
    }
    summarise("transfer: drop of (a) under (c)'s hints / under random", ratio, "x")


if __name__ == "__main__":
    main()

"""Paired seed-by-seed comparison of two E1 methods (default: STEER against always-CoT) on one checkpoint.

    PYTHONPATH=. .venv/bin/python bench/steer_paired.py OUT_DIR [OUT_DIR ...] [--pairs FILE] [--margin 0.01]

Reads the JSON summaries ``bench/steer_rl.py`` wrote, pairs the two methods by seed, and adds the rows of
``--pairs`` (a JSON list, or an object whose "pairs", or ``--pairs-key``, is one, of ``{"seed", "a_pdms", "b_pdms", "a_epdms",
"b_epdms"}``, for seeds whose JSON files were not kept).  For PDMS and EPDMS-lite it prints each seed's difference A − B, the mean, the sample sd, the 95 %
Student-t interval, the one-sided non-inferiority test of H0: mean ≤ −margin (t and p), and the exact sign-flip
(permutation) p-value of H0: mean = 0.  Non-inferiority at the margin is shown when the interval's lower end is
above −margin.

``--a-dir DIR`` pairs a variant run later (method ``--a`` in DIR, e.g. STEER with another option) with the kept
rows: its values replace A's for the seeds it has, and only those seeds are compared; with ``--against-old-a`` the
replaced A values become B (the variant against the original method, seed by seed).

``--pool FILE:KEY`` (repeatable) adds the rows of another list (e.g. another build's) as separate pairs, never merged
with the others by seed, labelled ``FILE_STEM:KEY/seed``: one analysis over several builds or batches.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np
from scipy import stats
from steer_front import load  # the sibling script (bench/ is on sys.path when a bench script runs)


def pair(dirs: list[str], a: str, b: str) -> dict[int, dict[str, float]]:
    """Per seed with both methods: their PDMS and EPDMS-lite (runs read by ``steer_front.load``)."""
    runs = {(r["method"], r["seed"]): r for r in load(dirs)}
    return {
        seed: {
            "a_pdms": r["pdms"],
            "b_pdms": runs[(b, seed)]["pdms"],
            "a_epdms": r["epdms"],
            "b_epdms": runs[(b, seed)]["epdms"],
        }
        for (m, seed), r in runs.items()
        if m == a and (b, seed) in runs
    }


def kept_row(r: dict) -> dict[str, float]:
    """One per-seed row of a ``--pairs`` / ``--pool`` list: both methods' PDMS and EPDMS-lite (NaN where a row
    records no EPDMS-lite)."""
    return {k: float("nan") if r.get(k) is None else float(r[k]) for k in ("a_pdms", "b_pdms", "a_epdms", "b_epdms")}


def replace_a(row: dict[str, float], run: dict, against_old_a: bool) -> dict[str, float]:
    """``row`` with A's values taken from ``run``; B becomes the old A when ``against_old_a``."""
    out = dict(row)
    if against_old_a:
        out["b_pdms"], out["b_epdms"] = row["a_pdms"], row["a_epdms"]
    out["a_pdms"], out["a_epdms"] = run["pdms"], run["epdms"]
    return out


def sign_flip_p(d: np.ndarray) -> float:
    """Exact two-sided p of the paired sign-flip test (all 2^n sign patterns)."""
    obs = abs(d.mean())
    means = [abs((d * np.array(s)).mean()) for s in itertools.product((1, -1), repeat=len(d))]
    return float(np.mean(np.array(means) >= obs - 1e-12))


def summarize(d: np.ndarray, margin: float) -> dict[str, float]:
    n = len(d)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    se = sd / np.sqrt(n)
    q = stats.t.ppf(0.975, n - 1)
    t_ni = (mean + margin) / se
    return {
        "n": n,
        "mean": mean,
        "sd": sd,
        "ci_lo": mean - q * se,
        "ci_hi": mean + q * se,
        "t_noninf": t_ni,
        "p_noninf": float(stats.t.sf(t_ni, n - 1)),
        "p_signflip": sign_flip_p(d),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--pairs", help="JSON file of extra per-seed pairs")
    ap.add_argument("--pairs-key", default="pairs", help="which list of an object --pairs file to read")
    ap.add_argument("--a", default="steer")
    ap.add_argument("--b", default="always_cot")
    ap.add_argument("--margin", type=float, default=0.01)
    ap.add_argument("--a-dir", help="OUT_DIR of a variant of method A whose runs replace A's values")
    ap.add_argument("--against-old-a", action="store_true", help="with --a-dir: B is the replaced A")
    ap.add_argument("--pool", action="append", default=[], help="FILE:KEY of more pairs, kept apart (repeatable)")
    args = ap.parse_args()
    rows = pair(args.dirs, args.a, args.b)
    if args.pairs:
        blob = json.loads(Path(args.pairs).read_text())
        for r in blob[args.pairs_key] if isinstance(blob, dict) else blob:
            rows.setdefault(int(r["seed"]), kept_row(r))
    if args.a_dir:
        new = {r["seed"]: r for r in load([args.a_dir]) if r["method"] == args.a}
        rows = {s: replace_a(rows[s], new[s], args.against_old_a) for s in sorted(new) if s in rows}
    keys: list = sorted(rows)
    for item in args.pool:
        file, _, key = item.rpartition(":")
        for r in json.loads(Path(file).read_text())[key]:
            label = f"{Path(file).stem}:{key}/{int(r['seed'])}"
            rows[label] = kept_row(r)
            keys.append(label)
    seeds = keys
    a_label = f"{args.a} ({args.a_dir})" if args.a_dir else args.a
    b_label = args.a if args.a_dir and args.against_old_a else args.b
    print(f"| seed | {a_label} PDMS | {b_label} PDMS | Δ PDMS | Δ EPDMS-lite |")
    print("|---|---|---|---|---|")
    for s in seeds:
        r = rows[s]
        de = r["a_epdms"] - r["b_epdms"]
        print(
            f"| {s} | {r['a_pdms']:.3f} | {r['b_pdms']:.3f} | {r['a_pdms'] - r['b_pdms']:+.3f} | "
            + ("– |" if np.isnan(de) else f"{de:+.3f} |")
        )
    print()
    print(
        "| metric | n | mean Δ | sd | 95 % t interval | non-inferiority (H0: Δ ≤ −margin) t, p | sign-flip p (Δ = 0) |"
    )
    print("|---|---|---|---|---|---|---|")
    for key, label in (("pdms", "PDMS"), ("epdms", "EPDMS-lite")):
        d = np.array([rows[s][f"a_{key}"] - rows[s][f"b_{key}"] for s in seeds])
        if len(d) < 2 or np.isnan(d).any():  # EPDMS-lite is skipped when a row does not record it
            continue
        m = summarize(d, args.margin)
        print(
            f"| {label} | {m['n']} | {m['mean']:+.4f} | {m['sd']:.4f} | [{m['ci_lo']:+.4f}, {m['ci_hi']:+.4f}] | "
            f"{m['t_noninf']:+.2f}, {m['p_noninf']:.3f} | {m['p_signflip']:.3f} |"
        )


if __name__ == "__main__":
    main()

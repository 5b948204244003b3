"""Pair a batch of re-scored runs with recorded rows: the table and the ``steer_paired.py --pool`` rows.

    PYTHONPATH=. .venv/bin/python bench/steer_rows.py OUT_DIR --recorded FILE:KEY --key NEW [--vs-key NEW2]
        [--method steer] [--n 2000] [--write]
    PYTHONPATH=. .venv/bin/python bench/steer_rows.py OUT_DIR --b-method always_cot --file FILE --key NEW [--write]

For each ``<method>_s<seed>.json`` run in OUT_DIR that ``bench/steer_bigeval.py OUT_DIR N --method M`` has scored
(``big<N>/``; the CoT-forced pass ``big<N>_cot/`` is used where present), it takes the recorded row of the same
seed from FILE's list KEY (a row of ``steer_paired.py``'s form, A the earlier variant and B its baseline) and
builds two rows per seed: this run against the recorded B (written under ``--key``) and, with ``--vs-key``,
this run against the recorded A (the earlier variant, same seeds).  It prints one markdown line per seed (CoT
ratio per tier and Spearman on the run's own scenes, tokens and their share of B's, PDMS own route and CoT forced,
the hard tier, the recorded B and A) and the mean token share; ``--write`` adds the rows to FILE.

With ``--b-method M`` instead of ``--recorded``, B is method M's run of the same seed in OUT_DIR (run beside, scored
by the same ``steer_bigeval.py`` pass into ``big<N>/``), and ``--write`` adds the rows to ``--file``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from compute.steer.traces import THINK


def scored_b(path: Path) -> dict:
    """B's values from its ``steer_bigeval.py`` file, rounded as the recorded rows are."""
    b = json.loads(path.read_text())
    return {"b_pdms": round(b["pdms"], 4), "b_epdms": round(b["epdms"], 4), "b_tokens": round(b["tokens"], 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--recorded", help="FILE:KEY of the recorded rows to pair with")
    ap.add_argument("--b-method", help="pair with this method's scored runs in OUT_DIR instead of recorded rows")
    ap.add_argument("--file", help="with --b-method: the JSON file that --write adds the rows to")
    ap.add_argument("--key", required=True, help="key for this batch against the recorded B")
    ap.add_argument("--vs-key", help="key for this batch against the recorded A")
    ap.add_argument("--method", default="steer")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    out = Path(args.out)
    if (args.recorded is None) == (args.b_method is None) or (args.b_method and (not args.file or args.vs_key)):
        raise SystemExit("give either --recorded FILE:KEY [--vs-key K] or --b-method M with --file FILE")
    if args.recorded:
        file, key = args.recorded.rsplit(":", 1)
        rec = {r["seed"]: r for r in json.loads(Path(file).read_text())[key]}
    else:
        file, rec = args.file, None
    rows_b, rows_a = [], []
    for f in sorted(out.glob(f"{args.method}_s*.json")):
        blob = json.loads(f.read_text())
        s, seed = blob["summary"], blob["params"]["seed"]
        own_f, cot_f = out / f"big{args.n}" / f.name, out / f"big{args.n}_cot" / f.name
        if rec is not None:
            r = rec.get(seed)
        else:  # --b-method: B's scored run of the same seed, beside A's
            b_f = out / f"big{args.n}" / f"{args.b_method}_s{seed}.json"
            r = scored_b(b_f) if b_f.exists() else None
        if not own_f.exists() or r is None:
            continue
        own = json.loads(own_f.read_text())
        cot = json.loads(cot_f.read_text()) if cot_f.exists() else None
        row = {
            "seed": seed,
            "a_pdms": round(own["pdms"], 4),
            "a_epdms": round(own["epdms"], 4),
            "a_tokens": round(own["tokens"], 2),
            "a_cot_easy": round(s["cot_easy"], 3),
            "a_cot_hard": round(s["cot_hard"], 3),
        }
        if cot:
            row["a_pdms_cot_forced"] = round(cot["pdms"], 4)
        rows_b.append({**row, "b_pdms": r["b_pdms"], "b_epdms": r["b_epdms"], "b_tokens": r["b_tokens"]})
        if args.recorded:
            rows_a.append(
                {**row, **{f"b_{k[2:]}": r[k] for k in ("a_pdms", "a_epdms", "a_tokens", "a_cot_easy", "a_cot_hard")}}
            )
        tier, route = np.array(own["scenes"]["tier"]), np.array(own["scenes"]["route"])
        hard = tier == "hard"
        share = " / ".join(f"{np.mean(route[tier == t] == THINK):.2f}" for t in ("easy", "medium", "hard"))
        cot_cells = (
            f"{cot['pdms']:.4f} | {np.array(own['scenes']['pdms'])[hard].mean():.3f} / "
            f"{np.array(cot['scenes']['pdms'])[hard].mean():.3f}"
            if cot
            else f"– | {np.array(own['scenes']['pdms'])[hard].mean():.3f} / –"
        )
        print(
            f"| {seed} | {s['cot_easy']:.2f} / {s['cot_medium']:.2f} / {s['cot_hard']:.2f} | "
            f"{s['spearman_tier_pc']:+.2f} | {own['tokens']:.1f} ({own['tokens'] / r['b_tokens']:.4f}; "
            + (f"recorded A {r['a_tokens']:.1f}" if args.recorded else args.b_method)
            + f") | {own['pdms']:.4f} | {cot_cells} | {r['b_pdms']:.4f} | "
            + (f"{r['a_pdms']:.4f} | " if args.recorded else "")
            + f"CoT share on {args.n}: {share} |"
        )
    if not rows_b:
        raise SystemExit(f"no scored {args.method} runs in {out} with a B of the same seed")
    print(f"mean token share of B's: {np.mean([x['a_tokens'] / x['b_tokens'] for x in rows_b]):.4f}")
    if args.write:
        d = json.loads(Path(file).read_text())
        d[args.key] = rows_b
        if args.vs_key:
            d[args.vs_key] = rows_a
        Path(file).write_text(json.dumps(d, indent=2, ensure_ascii=False) + "\n")
        print(f"written: {file} {args.key}" + (f", {args.vs_key}" if args.vs_key else ""))


if __name__ == "__main__":
    main()

"""E3's route audit for a list of policies (``sft`` or saved E1 policy names): per hidden scene kind the net Δ with
both routes forced, the kind-oracle route and the router's CoT ratio; each result to OUT_DIR/<policy>.json and a
compact table to stdout.

    STEER_DATA_DIR=data PYTHONPATH=. .venv/bin/python bench/steer_audit.py OUT_DIR \
        '{"size": "medium", "sft_tokens": 3000000, "sft_lr": 2e-3, "n_pool": 20000, "cot": "rel", "threads": 1,
          "n_eval_final": 300, "audit_samples": 8}' sft steer-s0-1a2b3c4d5e6f ...

Each job is ``inspect({**base, "policy": P}, reporter)`` (the experiment's own entry point, seed 0's held-out
scenes unless ``seed`` is given).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from compute.core.reporter import ConsoleReporter, _jsonable
from compute.steer.run import inspect


def _f(v, fmt: str) -> str:
    return "  n/a" if v is None else format(v, fmt)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    base = json.loads(sys.argv[2])
    for policy in sys.argv[3:]:
        rep = ConsoleReporter(sys.stderr, data_dir=os.environ.get("STEER_DATA_DIR", "data"))
        summary = inspect({**base, "policy": policy}, rep)
        tables = {k: v for k, v in rep.tables.items() if k in ("route_audit", "route_audit_tiers", "per_tier")}
        (out / f"{policy}.json").write_text(json.dumps(_jsonable({"summary": summary, "tables": tables})))
        print(f"== {policy}: EPDMS-lite {summary['epdms']:.3f}, tokens {summary['tokens']:.1f}")
        print(
            f"{'tier':7} {'kind':17} {'n':>4} {'net Δ':>14} {'expert':>6} {'greedy CoT / dir':>15} {'greedy CoT−dir':>15} {'oracle':>8} {'router CoT':>10}"
        )
        for r in tables["route_audit"]["rows"]:
            print(
                f"{r['tier']:7} {r['kind']:17} {r['scenes']:4d} {r['delta']:+7.3f} ± {_f(r['delta_se'], '.3f')} "
                f"{r.get('expert', float('nan')):6.3f} {r['greedy_cot']:7.3f} / {r['greedy_direct']:.3f} {r['greedy_cot_minus_direct']:+7.3f} ± {_f(r['greedy_se'], '.3f')} {r['oracle_route'].strip('<>'):>8} "
                f"{r['policy_cot_ratio']:10.2f}"
            )
        for r in tables["route_audit_tiers"]["rows"]:
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

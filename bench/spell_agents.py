"""Spell vs ReAct on the same needle-search seeds and backend (scripted), side by side in one process.

Columns (spec §4 "Benchmark script"): success, turns, total tokens, peak prefix, edits applied, replays;
plus the ratios Spell/ReAct.  Also times the games suite and the fuzz so interpreter cost is visible.

    .venv/bin/python bench/spell_agents.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compute.spell.fuzz import fuzz_program  # noqa: E402
from compute.spell.harness import HarnessConfig  # noqa: E402
from compute.spell.run import needle_once  # noqa: E402
from compute.spell.tasks import GAME_FNS  # noqa: E402


def main() -> None:
    print("needle search, file_tokens=2000, budget=8000, needle=last, seeds 0-2 (mean)")
    hdr = (
        f"{'N':>3} | {'spell ok':>8} {'turns':>5} {'total':>8} {'peak':>6} {'edits':>5} {'repl':>4} | "
        f"{'react ok(budget/unb)':>20} {'steps':>5} {'total':>9} {'peak':>7} | {'peak ratio':>10} {'total ratio':>11}"
    )
    print(hdr)
    for n in (4, 8, 16, 32):
        rs = [needle_once(n, 2000, "last", 8000, s) for s in range(3)]
        m = {k: sum(r[k] for r in rs) / len(rs) for k in rs[0] if not k.startswith("_") and k != "react_error"}
        steps = sum(len(r["_react_series"]) for r in rs) / len(rs)
        print(
            f"{n:>3} | {m['spell_success']:>8.2f} {m['spell_turns']:>5.1f} {m['spell_total']:>8.0f} "
            f"{m['spell_peak']:>6.0f} "
            f"{m['spell_edits']:>5.1f} {m['spell_replays']:>4.0f} | "
            f"{m['react_success']:>9.2f}/{m['react_unbounded_success']:<10.2f} {steps:>5.1f} "
            f"{m['react_unbounded_total']:>9.0f} "
            f"{m['react_unbounded_peak']:>7.0f} | {m['spell_peak'] / m['react_unbounded_peak']:>10.4f} "
            f"{m['spell_total'] / m['react_unbounded_total']:>11.4f}"
        )
    t0 = time.perf_counter()
    turns = ok = runs = replays = 0
    for fn in GAME_FNS.values():
        for seed in range(10):
            res = fn(seed, HarnessConfig())
            ok += res.success
            runs += 1
            turns += len(res.harness.turns)
            replays += res.harness.replays
    dt = time.perf_counter() - t0
    print(f"\ngames: {ok}/{runs} solved, {turns} turns, {replays} replays, {dt:.2f} s ({1e3 * dt / turns:.2f} ms/turn)")
    t0 = time.perf_counter()
    eff = rep = 0
    for s in range(300):
        h, _ = fuzz_program(s, 6, 0.1)
        eff += len(h.journal)
        rep += h.replays
    dt = time.perf_counter() - t0
    print(f"fuzz: 300 programs, {eff} effects, {rep} replays, {dt:.2f} s ({1e3 * dt / 300:.1f} ms/program)")


if __name__ == "__main__":
    main()

"""Re-evaluate the saved final policies of ``bench/steer_rl.py`` runs on more held-out scenes, scene by scene.

    PYTHONPATH=. .venv/bin/python bench/steer_bigeval.py OUT_DIR [N=2000] [--pair steer always_cot]

For each run JSON in OUT_DIR (``<method>_s<seed>.json``) it loads the run's saved policy and scores it greedily
(deterministic: no seeding needed) on the first N held-out scenes of the run's seed: the same scene stream as the
run's own final evaluation (its first ``n_eval_final`` scenes are the run's scenes, which the script checks against
the run's recorded PDMS), and the method's own route (forced CoT/direct for always/never-CoT, the router otherwise),
as ``route_rl`` evaluates it. Per-scene PDMS / EPDMS-lite / tier / route go to
``OUT_DIR/big<N>/<method>_s<seed>.json`` (a subfolder, so ``steer_front.py`` and ``steer_paired.py`` still read
OUT_DIR as runs only). With ``--pair A B`` it then prints, per seed with both, A − B on the run's scenes and on all
N scenes, and the evaluation standard error of the paired difference (per-scene sd / √scenes): how much of the
seed-to-seed spread is scene sampling.

``--force cot`` / ``--force direct`` (a route audit) scores every policy with that route forced on every scene
instead (``OUT_DIR/big<N>_<route>/``; no check against the run's value, which used the policy's own route);
``--method M`` limits a pass to M's runs; ``--sft`` scores each run's SFT starting point instead of its policy
(``big<N>_sft[_<route>]/``; with the run's own forced route it must give the run's recorded SFT EPDMS-lite).
With ``--audit A B`` it then prints, per seed and hidden tier, A's forced-route PDMS beside B's own, and A's
oracle (the better of A's two forced routes per scene, when both were scored): how much of A − B is in the plans
under a route rather than in the route choice.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from compute.steer.config import SteerConfig
from compute.steer.evaluate import rollout_eval
from compute.steer.inspector import load_policy
from compute.steer.run import FORCED, final_problems
from compute.steer.scenes import TIERS
from compute.steer.sft import load_or_build
from compute.steer.traces import DIRECT, THINK


def eval_se(d: np.ndarray) -> float:
    """The evaluation standard error of a mean over scenes (per-scene sd / √scenes)."""
    return float(d.std(ddof=1) / np.sqrt(len(d)))


def paired_pdms(a: dict, b: dict) -> np.ndarray:
    """Per-scene A − B PDMS from two scored files' ``scenes`` (the same scenes, so the same seed and N)."""
    if a["tier"] != b["tier"]:
        raise SystemExit("the two policies were scored on different scenes (different seeds or N?)")
    return np.array(a["pdms"]) - np.array(b["pdms"])


def evaluate(run_path: Path, n: int, force: str | None = None, sft: bool = False) -> dict:
    blob = json.loads(run_path.read_text())
    params, summary = blob["params"], blob["summary"]
    torch.set_num_threads(1)
    cfg = SteerConfig.from_params({**params, "n_eval_final": n})
    data_dir = os.environ.get("STEER_DATA_DIR", "data")  # as steer_rl.py
    if sft:  # the run's starting point: its SFT checkpoint, without the RL weights
        res = load_or_build(cfg.sft_config(), data_dir)
        model, task = res.model.eval(), res.task
    else:
        model, task, _ = load_policy(summary["policy"], data_dir)
    task.metric = cfg.metric
    problems = final_problems(cfg, task)
    t0 = time.time()
    route = {"cot": THINK, "direct": DIRECT}[force] if force else FORCED.get(params["method"])
    rows = rollout_eval(model, task, problems, route, cfg.max_new)
    k = int(summary["n_eval_final"])
    pdms = np.array([r["pdms"] for r in rows])
    check = float(pdms[:k].mean())
    if force is None and not sft and abs(check - summary["pdms"]) > 1e-9:
        raise SystemExit(f"{run_path.name}: first {k} scenes give PDMS {check} but the run recorded {summary['pdms']}")
    if sft and route == FORCED.get(params["method"]):  # route_rl scored the SFT start with this route too
        check = float(np.mean([r["epdms"] for r in rows[:k]]))
        if abs(check - summary["sft_epdms"]) > 1e-9:
            raise SystemExit(
                f"{run_path.name}: SFT gives EPDMS {check} on the run's scenes, recorded {summary['sft_epdms']}"
            )
    return {
        "method": params["method"],
        "seed": params["seed"],
        "policy": summary["policy"],
        "n_run": k,
        "pdms": float(pdms.mean()),
        "epdms": float(np.mean([r["epdms"] for r in rows])),
        "tokens": float(np.mean([r["tokens"] for r in rows])),
        "scenes": {key: [r[key] for r in rows] for key in ("pdms", "epdms", "tier", "route", "tokens")},
        "wall_s": time.time() - t0,
    }


def audit(out: Path, n: int, a: str, b: str) -> None:
    """Per seed and tier: B's own PDMS, A's own, A with CoT forced, A with direct forced, A's per-scene oracle
    ("–" where B's or the direct pass's scores are not in OUT_DIR, e.g. B's policies from an earlier session)."""

    def scenes(sub: str, name: str) -> dict | None:
        path = out / sub / name
        return json.loads(path.read_text())["scenes"] if path.exists() else None

    print(f"| seed | tier | n | {b} | {a} | {a}, CoT forced | {a}, direct forced | {a}, oracle route | {a} CoT share |")
    print("|---|---|---|---|---|---|---|---|---|")
    for f in sorted((out / f"big{n}").glob(f"{a}_s*.json")):
        own_b = scenes(f"big{n}", f.name.replace(f"{a}_", f"{b}_", 1))
        own_a, cot, dire = scenes(f"big{n}", f.name), scenes(f"big{n}_cot", f.name), scenes(f"big{n}_direct", f.name)
        if cot is None:
            continue
        seed = f.stem.rsplit("_s", 1)[1]
        tiers = np.array(own_a["tier"])
        for tier in [*TIERS, "all"]:
            m = np.ones(len(tiers), bool) if tier == "all" else tiers == tier
            vals = [np.array(own_b["pdms"])[m] if own_b else None, np.array(own_a["pdms"])[m], np.array(cot["pdms"])[m]]
            vals.append(np.array(dire["pdms"])[m] if dire else None)
            vals.append(np.maximum(vals[2], vals[3]) if dire else None)
            share = np.mean(np.array(own_a["route"])[m] == THINK)
            cells = " | ".join("–" if v is None else f"{v.mean():.4f}" for v in vals)
            print(f"| {seed} | {tier} | {int(m.sum())} | {cells} | {share:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("n", nargs="?", type=int, default=2000)
    ap.add_argument("--pair", nargs=2, metavar=("A", "B"))
    ap.add_argument("--force", choices=("cot", "direct"), help="score every policy with this route forced")
    ap.add_argument("--method", help="only the runs of this method")
    ap.add_argument("--sft", action="store_true", help="score each run's SFT starting point instead of its policy")
    ap.add_argument("--audit", nargs=2, metavar=("A", "B"), help="A's forced routes against B's own (no scoring)")
    args = ap.parse_args()
    out = Path(args.out)
    if args.audit:
        audit(out, args.n, *args.audit)
        return
    sub = f"big{args.n}" + ("_sft" if args.sft else "") + (f"_{args.force}" if args.force else "")
    (out / sub).mkdir(exist_ok=True)
    res = {}
    for f in sorted(out.glob(f"{args.method or '*'}_s*.json")):
        dst = out / sub / f.name
        if not dst.exists():
            dst.write_text(json.dumps(evaluate(f, args.n, args.force, args.sft)))
        r = json.loads(dst.read_text())
        res[(r["method"], r["seed"])] = r
        print(f"{f.name}: PDMS {r['pdms']:.4f} on {args.n} scenes ({r['tokens']:.1f} tokens)", flush=True)
    if not args.pair:
        return
    a, b = args.pair
    print(f"\n| seed | {a} − {b}, run's scenes | on {args.n} scenes | eval SE ({args.n}) | eval SE (run's) |")
    print("|---|---|---|---|---|")
    for (m, seed), ra in sorted(res.items(), key=lambda kv: kv[0][1]):
        if m != a or (b, seed) not in res:
            continue
        d = paired_pdms(ra["scenes"], res[(b, seed)]["scenes"])
        k = ra["n_run"]
        print(f"| {seed} | {d[:k].mean():+.4f} | {d.mean():+.4f} | {eval_se(d):.4f} | {eval_se(d[:k]):.4f} |")


if __name__ == "__main__":
    main()

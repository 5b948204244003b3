"""Benchmark: batch-1 decode with SVD-predicted contextual sparsity vs dense, oracle and gate-first, side by side.

Usage:  .venv/bin/python bench/svd_sparsity_decode.py [--tokens 32] [--trials 5] [--threads 1] [--trained]

1. Scaled FFN stack (spec §4): 8 distinct ReGLU layers, (d, d_ff) = (1024, 4096) and (512, 2048), densities
   0.1 / 0.2 / 0.4, a fresh input and a fresh active set for every (token, layer), index_select gathers, warm-up,
   median over interleaved trials.  The SVD path includes the rank-r predictor GEMVs, the threshold and nonzero.
2. End to end on a random-weight TinyLM of the scaled shape (vocab 4096, KV cache, batch 1), with Amdahl's law
   computed from the dense run's measured FFN time share and the FFN-only speed-up of part 1.
3. ``--trained``: end to end on the trained tiny model (built by the app's build step under data/), with its
   calibrated predictor (ρ = 0.99, automatic rank) and the true active sets (oracle) recorded from a dense pass.

Output: Markdown tables for docs/benchmarks/svd_sparsity.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compute.core.reporter import MemoryReporter  # noqa: E402
from compute.svd_sparsity import speed as SP  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=32, help="decode tokens per trial")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--densities", default="0.1,0.2,0.4")
    ap.add_argument("--shapes", default="1024x4096,512x2048")
    ap.add_argument("--e2e", action=argparse.BooleanOptionalAction, default=True, help="scaled end-to-end part")
    ap.add_argument("--trained", action="store_true", help="also the trained tiny model (needs its cached build)")
    ap.add_argument("--data-dir", default="data")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dens = [float(x) for x in args.densities.split(",")]
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    t_all = time.perf_counter()
    print(f"threads {args.threads}, {args.layers} layers, {args.tokens} tokens × {args.trials} trials (median)\n")
    print("## FFN only (all layers, per token)\n")
    print(
        "| (d, d_ff) | weights MiB | density | dense ms | oracle × | SVD-sparse × | gate-first × "
        "| SVD: predictor ms | gather ms | GEMV ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ffn: dict[tuple[int, int, float], dict[str, float]] = {}
    for d, d_ff in shapes:
        for p in dens:
            r = SP.ffn_benchmark(d, d_ff, args.layers, p, d // 8, args.tokens, args.trials, 8)
            ffn[(d, d_ff, p)] = r
            print(
                f"| ({d}, {d_ff}) | {r['weights_mib']:.0f} | {p:g} (SVD {r['svd_density']:.3f}) | "
                f"{1e3 * r['dense_s']:.2f} | {r['speedup_oracle']:.2f} | {r['speedup_svd']:.2f} | "
                f"{r['speedup_gate_first']:.2f} | {1e3 * r['predictor_s']:.2f} | {1e3 * r['gather_s']:.2f} | "
                f"{1e3 * r['gemv_s']:.2f} |",
                flush=True,
            )
    if args.e2e:
        d, d_ff = shapes[0]
        print(f"\n## End to end, random-weight TinyLM (d={d}, d_ff={d_ff}, {args.layers} layers, vocab 4096)\n")
        print(
            "| density | dense tok/s | SVD tok/s | SVD × | oracle × | gate-first × | dense FFN share "
            "| Amdahl (FFN-only SVD ×) | measured / Amdahl | in-situ FFN × | Amdahl in situ |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        model = SP.synthetic_model(d, d_ff, args.layers, 4096, args.tokens + 16)
        prompt = list(range(3, 11))
        for p in dens:
            e = SP.e2e_decode(
                model,
                prompt,
                args.tokens,
                args.trials,
                lambda mode, p=p: SP.synthetic_gather_modules(model, mode, p, d // 8, args.tokens + 1),
            )
            sd = e["dense"]["tokens_per_s"]
            am = SP.amdahl(e["dense"]["ffn_share"], ffn[(d, d_ff, p)]["speedup_svd"])
            meas = e["svd"]["tokens_per_s"] / sd
            # FFN speed-up inside the decode loop (hook timers): (share/tok_s)_dense / (share/tok_s)_svd
            situ = (e["dense"]["ffn_share"] / sd) / (e["svd"]["ffn_share"] / e["svd"]["tokens_per_s"])
            print(
                f"| {p:g} | {sd:.1f} | {e['svd']['tokens_per_s']:.1f} | {meas:.2f} | "
                f"{e['oracle']['tokens_per_s'] / sd:.2f} | {e['gate_first']['tokens_per_s'] / sd:.2f} | "
                f"{e['dense']['ffn_share']:.2f} | {am:.2f} ({ffn[(d, d_ff, p)]['speedup_svd']:.2f}) | "
                f"{meas / am:.2f} | {situ:.2f} | {SP.amdahl(e['dense']['ffn_share'], situ):.2f} |",
                flush=True,
            )
        del model
    if args.trained:
        from compute.svd_sparsity.run import decode_speed

        rep = MemoryReporter(data_dir=args.data_dir)
        s = decode_speed(
            {"model": "default", "mode": "trained", "n_tokens": args.tokens, "trials": args.trials, "seed": 0}
            | {"threads": args.threads, "target_recall": 0.99, "n_cal": 16384},
            rep,
        )
        print("\n## End to end, trained tiny model (d=256, d_ff=1024, 4 layers, vocab 4096), ρ = 0.99\n")
        print("| mode | tok/s | e2e × | FFN-only × | attention share | FFN share | other share | density |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rep.tables["trained"]["rows"]:
            print(
                f"| {r['mode']} | {r['tokens_per_s']:.1f} | {r['e2e_speedup']:.2f} | {r['ffn_speedup']:.2f} | "
                f"{r['attention_share']:.2f} | {r['ffn_share']:.2f} | {r['other_share']:.2f} | {r['density']:.3f} |"
            )
        print(f"\nAmdahl from the dense FFN share and the FFN-only speed-up: {s['trained_amdahl_svd']:.2f}×")
    print(f"\n(total {time.perf_counter() - t_all:.0f} s wall)")


if __name__ == "__main__":
    main()

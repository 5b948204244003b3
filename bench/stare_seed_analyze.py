"""Per-run entropy trajectory relative to H_SFT, band shares, accuracy mean ± std and the paired STARE − GRPO-ds
difference with a t 95 % CI, from /tmp/stare/<prefix>_<method>_s<seed>.json (bench/stare_seed_run.py outputs).

Usage: python bench/stare_seed_analyze.py [prefix=main] [stare method=stare_o1]
"""

import glob
import json
import math
import sys

import numpy as np
from scipy.stats import t

PREFIX = sys.argv[1] if len(sys.argv) > 1 else "main"
ARM = sys.argv[2] if len(sys.argv) > 2 else "stare_o1"
rows = {}
for f in sorted(glob.glob(f"/tmp/stare/{PREFIX}_*_s*.json")):
    d = json.load(open(f))
    s = d["summary"]
    e = np.array(d["entropy"][1])
    H = s["H_sft"]
    tg = s["H_tgt"]
    reach = np.nonzero(e <= tg)[0]
    inb = np.abs(e - tg) <= 0.2 * tg
    r = dict(
        m=s["method"],
        seed=s["seed"],
        H=H,
        start=e[0] / H,
        min=e.min() / H,
        argmin=int(e.argmin()) + 1,
        end=s["final_entropy"] / H,
        reach=s["band_reached_step"],
        inband_all=inb.mean(),
        inband_after=inb[reach[0] :].mean() if len(reach) else float("nan"),
        below_band=(e < 0.8 * tg).mean(),
        gate=s["gate_duty"],
        acc0=s["sft_heldout_acc"],
        acc=s["final_heldout_acc"],
        len=s["final_length"],
        sps=s["seconds_per_step"],
    )
    rows[(r["m"], r["seed"])] = r
    print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
    print("   entropy:", " ".join(f"{v:.3f}" for v in e))
for m in sorted({k[0] for k in rows}):
    a = [rows[k]["acc"] for k in rows if k[0] == m]
    en = [rows[k]["end"] for k in rows if k[0] == m]
    if len(a) > 1:
        print(
            m,
            f"acc mean {np.mean(a):.4f} std {np.std(a, ddof=1):.4f} n={len(a)}; end H/H_sft mean {np.mean(en):.3f}",
        )
seeds = sorted(k[1] for k in rows if k[0] == ARM and ("grpo_ds", k[1]) in rows)
for key in ("acc", "end", "inband_after", "below_band"):
    dd = np.array([rows[(ARM, s)][key] - rows[("grpo_ds", s)][key] for s in seeds])
    if len(dd) > 1:
        hw = t.ppf(0.975, len(dd) - 1) * dd.std(ddof=1) / math.sqrt(len(dd))
        print(
            f"paired {key} {ARM} - grpo_ds: diffs {dd.round(4).tolist()} mean {dd.mean():.4f} 95% CI [{dd.mean() - hw:.4f}, {dd.mean() + hw:.4f}]"
        )

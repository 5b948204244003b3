"""Sampling throughput with vs without the KV cache, side by side in one process (ratios cancel contention).

Usage: .venv/bin/python bench/grpo_core_sampling.py [--size small] [--batch 128] [--lengths 48 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from compute.core.lm.model import LMConfig, TinyLM  # noqa: E402
from compute.core.rl.run import _time_generate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="small")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lengths", type=int, nargs="+", default=[48, 64])
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = TinyLM(LMConfig.sized(a.size, 36, max_len=320)).eval()
    _time_generate(model, 4, 4, True)  # warm-up
    print(f"size={a.size} ({model.n_params() / 1e6:.2f} M params), batch={a.batch}, threads={a.threads}")
    print(
        f"{'new tokens':>10} {'cache s':>9} {'recompute s':>12} {'cache tok/s':>12} "
        f"{'recompute tok/s':>16} {'speed-up':>9}"
    )
    for n in a.lengths:
        tc = _time_generate(model, a.batch, n, True)
        tn = _time_generate(model, a.batch, n, False)
        print(f"{n:>10} {tc:>9.2f} {tn:>12.2f} {a.batch * n / tc:>12.0f} {a.batch * n / tn:>16.0f} {tn / tc:>8.1f}×")


if __name__ == "__main__":
    main()

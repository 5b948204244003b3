"""Self-play statistics of one Seirênes run (the lab's ``seirenes/selfplay`` experiment) in windows of steps.

    PYTHONPATH=. python bench/seirenes_selfplay.py key=value ... [window=50]

``key=value`` pairs are SeirenesConfig fields, as in bench/seirenes_measure.py (one torch thread unless
``threads=`` is given).  Prints, per logged ``selfplay/*``, ``family/*`` and ``acc/*`` series, its mean over
consecutive windows of ``window`` steps (Adversary reward, valid-hint rate, p̂_clean / p̂_hint, hint families, dead
groups), then the top-drop hints and the run's summary (greedy accuracies at the end, family KL early/late).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from compute.core.reporter import MemoryReporter
from compute.seirenes.run import selfplay_run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from seirenes_measure import _parse  # noqa: E402


def main() -> None:
    params = _parse(sys.argv[1:])
    window = int(params.pop("window", 50))
    torch.set_num_threads(int(params["threads"]))
    rep = MemoryReporter(data_dir="data")
    t0 = time.time()
    summary = selfplay_run(params, rep)
    for key in sorted(k for k in rep.points if k.startswith(("selfplay/", "family/", "acc/"))):
        ys = np.array([np.nan if y is None else y for y in rep.points[key][1]], dtype=float)
        means = [np.nanmean(ys[i : i + window]) for i in range(0, len(ys), window)]
        print(key, " ".join(f"{m:.3f}" for m in means))
    top = rep.tables.get("top_hints", {})
    print("top_hints", json.dumps(top.get("rows", top)))
    print("summary", json.dumps(summary))
    print(f"wall {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()

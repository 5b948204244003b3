"""One STARE/baseline run from the seed-0 SFT checkpoint (RL seed varies); writes summary + entropy/gate/accuracy curves.

Usage: PYTHONPATH=. .venv/bin/python bench/stare_seed_run.py '{json params}' OUT.json   (docs/papers/stare.md)
"""

import json
import sys
import time
from dataclasses import replace

from compute.core.reporter import MemoryReporter
from compute.stare.run import _setup, load_or_build, train_one

p = json.loads(sys.argv[1])
out = sys.argv[2]
r = MemoryReporter(data_dir="data")
t0 = time.time()
cfg = _setup(dict(threads=1, **p))
res = load_or_build(replace(cfg, seed=0).sft(), r.data_dir, r, cfg.device)  # one SFT checkpoint, RL seed varies
s = train_one(cfg, r, res)
ent = r.points.get("entropy/mean", ([], []))
gate = r.points.get("stare/gate", ([], []))
acc = r.points.get("acc/heldout", ([], []))
ctl = {k: v for k, v in r.points.items() if k.startswith("stare/")}
json.dump(dict(params=p, summary=s, entropy=ent, gate=gate, acc=acc, stare=ctl, wall=time.time() - t0), open(out, "w"))
print(json.dumps(s), time.time() - t0, flush=True)

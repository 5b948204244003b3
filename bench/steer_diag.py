"""Where do the forced-CoT and forced-direct greedy plans go wrong on hard scenes? (diagnosis for the pre-RL gate)

Per hard-scene kind (cut-in / closure / yellow): mean EPDMS-lite of each route, how often the plan equals the
expert's, for CoT which fields of the trace are wrong (lane statuses, light, the meta parameters) and whether the
plan is a faithful copy of the meta the model wrote.  Usage (from the repo root):

    PYTHONPATH=. .venv/bin/python bench/steer_diag.py '{"size": "small", "sft_tokens": 1500000, "threads": 1}'
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

import numpy as np
import torch

from compute.core.lm.sampling import generate
from compute.core.reporter import ConsoleReporter
from compute.core.tasks import split_rng
from compute.steer.run import _checkpoint, _setup
from compute.steer.scenes import PlanSpec
from compute.steer.traces import DIRECT, THINK, cot_rel, cot_text


def kind(scene) -> str:
    if scene.closure is not None:
        return "closure"
    if scene.light is not None and scene.light[0] == "Y":
        return "yellow"
    if any(a.kind == "cut" for a in scene.agents):
        return "cut"
    return "other"


def main() -> None:
    p = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    n = int(p.pop("n", 150))
    tiers = p.pop("tiers", "hard")
    cfg = _setup(p)
    rep = ConsoleReporter(sys.stderr, data_dir="data")
    res = _checkpoint(cfg, rep)
    model, task = res.model, res.task
    task.tiers = tuple(tiers.split(","))
    probs = task.sample(n, split_rng(777, "test"), "test")
    tok = task.tokenizer
    out = {}
    for route in (THINK, DIRECT):
        g = generate(
            model,
            [task.prompt(q) for q in probs],
            temperature=0.0,
            max_new=cfg.max_new,
            eos_id=tok.eos_id,
            pad_id=tok.pad_id,
            force_prefix=[[tok.stoi[route]]] * len(probs),
        )
        out[route] = [tok.decode(g.response[j][g.response_mask[j] > 0].tolist()) for j in range(len(probs))]
    stats: dict = defaultdict(lambda: defaultdict(list))
    examples = []
    for j, q in enumerate(probs):
        s, a = q.data["scene"], q.data["analysis"]
        k = kind(s)
        exp = a.expert.actions()
        truth = (cot_text if task.cot == "lanes" else cot_rel)(s, a.expert).split(" ; ")
        for route in (THINK, DIRECT):
            r, _, info = task.verify(q, out[route][j])
            body = out[route][j].split()
            plan = body[len(body) - 8 :]
            st = stats[(k, route)]
            st["score"].append(r)
            st["exact"].append(plan == exp)
            if route == THINK:
                txt = " ".join(body[1:])
                cot = txt.split(" | ")[0].split(" ; ") if " | " in txt else []
                st["cot_all_ok"].append(cot == truth)
                for i, name in enumerate(("lanes", *[t.split()[0] for t in truth[1:]])):
                    ok = i < len(cot) and cot[i] == truth[i]
                    st[f"ok_{name}"].append(ok)
                meta = [c for c in cot if c.startswith("meta")]
                if meta:
                    m = meta[0].split()[1:]
                    try:
                        spec = PlanSpec(m[0], int(m[1]), m[2], m[3], int(m[4]))
                        st["plan_copies_meta"].append(spec.actions() == plan)
                        sc = task.evaluate_plan(q, spec.actions())["epdms"]
                        st["meta_plan_score"].append(sc)
                    except Exception:
                        st["plan_copies_meta"].append(False)
                if len(examples) < 12 and r < a.expert_score - 0.05:
                    examples.append(
                        {
                            "kind": k,
                            "prompt": q.question,
                            "truth": " ; ".join(truth) + " | " + " ".join(exp),
                            "cot": txt,
                            "score": round(r, 3),
                            "expert": round(a.expert_score, 3),
                        }
                    )
    for (k, route), st in sorted(stats.items()):
        row = {"kind": k, "route": route, "n": len(st["score"])}
        row.update({m: round(float(np.mean(v)), 3) for m, v in st.items() if v})
        print(json.dumps(row), flush=True)
    for e in examples:
        print(json.dumps(e), flush=True)


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()

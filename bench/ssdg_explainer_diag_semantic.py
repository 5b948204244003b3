"""PYTHONPATH=. .venv/bin/python bench/ssdg_explainer_diag_semantic.py [seeds, e.g. 0,1,2,3,4] [variants]

Why does SSDG module (a) collapse seeds on BA-2Motifs?  Split (a) into its two parts and look at the proxies.

variants (all on the ba_2motifs preset's cached GNN and 100 explained graphs, 20 epochs, 5 generator steps):
  proxy            ProxyExplainer
  a_full           (a) = one-hot ŷ in the decoder + λ_s L_sem          (ssdg, boundary/contrastive off)
  a_cond_only      one-hot ŷ in the decoder, λ_s = 0
  a_sem_only       L_sem only, unconditioned decoder
per seed: AUROC, Spearman(mask, d_u + d_v), agreement of f(proxy) with ŷ for the trained mask, for an all-ones
mask and for an all-zeros mask (does the proxy carry the label without the explanation?), and the
same with the one-hot label flipped (conditioned decoders only).
"""

import json
import os
import sys
import time

import numpy as np
import torch
from scipy.stats import spearmanr

from compute.core.reporter import MemoryReporter
from compute.ssdg_explainer.config import ExplainConfig
from compute.ssdg_explainer.explainers import AmortizedExplainer
from compute.ssdg_explainer.metrics import edge_auroc
from compute.ssdg_explainer.run import amortized_config, prepare

torch.set_num_threads(1)
seeds = [int(s) for s in sys.argv[1].split(",")] if len(sys.argv) > 1 else [0, 1, 2]
cfg = ExplainConfig.from_params({"dataset": "ba_2motifs", "n_graphs": 600, "gnn_epochs": 200})
rep = MemoryReporter(data_dir=os.environ.get("SSDG_DATA_DIR", "data"))
data, model, ex, stats = prepare(cfg, rep)
X, A = ex.X, ex.A
with torch.no_grad():
    y_hat = model(X, A).argmax(-1)
deg = A.sum(-1)
dsum = deg.unsqueeze(-1) + deg.unsqueeze(-2)

VARIANTS = {
    "proxy": ("proxy", {}, False),
    "a_full": ("ssdg", dict(semantic=True, boundary=False, contrastive=False), False),
    "a_cond_only": ("ssdg", dict(semantic=True, boundary=False, contrastive=False, lam_s=0.0), False),
    "a_sem_only": ("ssdg", dict(semantic=False, boundary=False, contrastive=False), True),
}
pick = sys.argv[2].split(",") if len(sys.argv) > 2 else list(VARIANTS)


def rho(M):
    r = []
    for b in range(len(A)):
        iu = torch.triu(A[b], 1) > 0
        r.append(spearmanr(M[b][iu].numpy(), dsum[b][iu].numpy())[0])
    return float(np.nanmean(r))


for name in pick:
    method, over, sem_after = VARIANTS[name]
    for s in seeds:
        t = time.time()
        acfg = amortized_config(cfg, method, **over)
        ex_ = AmortizedExplainer(model, X.shape[-1], A.shape[-1], acfg, n_classes=2, seed=s)
        if sem_after:
            ex_.cfg.semantic = True  # L_sem on, but the generator was built unconditioned
        logs = []
        ex_.fit(X, A, seed=s, on_step=lambda st, ep, lg, logs=logs: logs.append(lg))
        M = ex_.explain(X, A)
        auc = edge_auroc(M, A, ex.gt)[0]
        out = {
            "variant": name,
            "seed": s,
            "auroc": round(auc, 3),
            "rho_degree": round(rho(M), 3),
            "mask_mean_gt": round(float((M * ex.gt).sum() / ex.gt.sum()), 3),
            "mask_mean_other": round(float((M * A * (1 - ex.gt)).sum() / (A * (1 - ex.gt)).sum()), 3),
        }
        with torch.no_grad():
            for mname, mm in {"trained": M, "ones": torch.ones_like(M), "zeros": torch.zeros_like(M)}.items():
                P, _, _ = ex_.proxy(X, A, mm, y_hat)
                out[f"agree_{mname}"] = round(float((model(X, P).argmax(-1) == y_hat).float().mean()), 3)
                if mname == "trained":
                    out["proxy_density_edge"] = round(float((P * A).sum() / A.sum()), 3)
                if ex_.generator.n_classes:
                    P, _, _ = ex_.proxy(X, A, mm, 1 - y_hat)
                    out[f"agree_{mname}_flipped_label"] = round(
                        float((model(X, P).argmax(-1) == y_hat).float().mean()), 3
                    )
        last = logs[-5:]
        out["final_ce"] = round(float(np.mean([x["loss/ce"] for x in last])), 4)
        if "loss/semantic" in last[-1]:
            out["final_sem"] = round(float(np.mean([x["loss/semantic"] for x in last])), 4)
        out["s"] = round(time.time() - t, 1)
        print(json.dumps(out), flush=True)

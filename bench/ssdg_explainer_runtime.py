"""Runtime per explained graph: amortised explainers (PGExplainer, Proxy, SSDG) vs per-instance GNNExplainer,
and batched vs per-graph proxy generation.  All in one process so machine contention cancels in the ratios.

    PYTHONPATH=. .venv/bin/python bench/ssdg_explainer_runtime.py
"""

from __future__ import annotations

import time

import torch

from compute.ssdg_explainer.data import syn_mutag
from compute.ssdg_explainer.explainers import AmortizedConfig, AmortizedExplainer, gnn_explainer
from compute.ssdg_explainer.gnn import train_gnn

torch.set_num_threads(1)


def main(n_explain: int = 60) -> None:
    data = syn_mutag(200, seed=0)
    model, stats = train_gnn(data, epochs=25, seed=0)
    ex = data.subset(list(range(70, 70 + n_explain)))
    rows = {}
    for method in ("pgexplainer", "proxy", "ssdg"):
        e = AmortizedExplainer(model, 3, 20, AmortizedConfig(method=method, epochs=5, batch_size=30, gen_steps=5))
        t = time.perf_counter()
        e.fit(ex.X, ex.A, seed=0)
        fit = time.perf_counter() - t
        t = time.perf_counter()
        for _ in range(10):
            e.explain(ex.X, ex.A)
        infer = (time.perf_counter() - t) / 10
        rows[method] = (fit / n_explain, infer / n_explain)
    t = time.perf_counter()
    gnn_explainer(model, ex.X, ex.A, epochs=100, seed=0)
    rows["gnnexplainer"] = (0.0, (time.perf_counter() - t) / n_explain)
    print(f"GNN test acc {stats['test_acc']:.3f}; {n_explain} graphs explained (SynMUTAG, 20 nodes)")
    print(f"{'method':14s} {'train s/graph':>14s} {'explain s/graph':>16s} {'GNNExpl / this (explain)':>26s}")
    for m, (fit, inf) in rows.items():
        print(f"{m:14s} {fit:14.5f} {inf:16.6f} {rows['gnnexplainer'][1] / inf:26.1f}")
    # batched vs per-graph proxy generation with the trained SSDG generator
    y_hat = model(ex.X, ex.A).argmax(-1)
    m = e.explain(ex.X, ex.A)
    with torch.no_grad():
        t = time.perf_counter()
        for _ in range(5):
            e.proxy(ex.X, ex.A, m, y_hat)
        batched = (time.perf_counter() - t) / 5
        t = time.perf_counter()
        for b in range(n_explain):
            e.proxy(ex.X[b : b + 1], ex.A[b : b + 1], m[b : b + 1], y_hat[b : b + 1])
        single = time.perf_counter() - t
    print(
        f"proxy generation: batched {batched / n_explain * 1e3:.3f} ms/graph, per-graph {single / n_explain * 1e3:.3f} "
        f"ms/graph, ratio per-graph/batched {single / batched:.1f}x"
    )


if __name__ == "__main__":
    main()

"""PYTHONPATH=. .venv/bin/python bench/ssdg_explainer_node_recipe.py tree_cycles,tree_grid

Train the node GNN with the GNNExplainer code recipe (``arch="gnnexplainer"``) for 2000 epochs and print the test
accuracy at epochs 100 … 2000 (constant learning rate, so epoch e of one run equals an e-epoch run).
"""

import sys
import time

import torch

from compute.ssdg_explainer.nodes import node_dataset, train_node_gnn

torch.set_num_threads(1)
for name in sys.argv[1].split(","):
    epochs = 2000
    t = time.time()
    full = node_dataset(name, seed=0)
    hist: dict[int, tuple[float, float]] = {}

    def log(ep: int, loss: float, acc: float, hist: dict = hist) -> None:
        hist[ep] = (round(loss, 4), round(acc, 3))

    _, st = train_node_gnn(full, epochs=epochs, seed=0, arch="gnnexplainer", on_epoch=log)
    curve = {e: hist[e] for e in (100, 250, 500, 750, 1000, 1250, 1500, 1750, 2000)}
    print(name, epochs, "arch=gnnexplainer", st, f"{time.time() - t:.0f}s", "curve(loss,test_acc)", curve, flush=True)

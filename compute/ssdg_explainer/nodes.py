"""Node-classification benchmarks (GNNExplainer, NeurIPS 2019; PyG ``ExplainerDataset``) and the node GNN.

BA-Shapes:  BA(300, 5) base + 80 houses, labels 0 base / 1 roof / 2 middle / 3 bottom of a house.
Tree-Cycles: balanced binary tree of depth 8 (511 nodes) + 80 six-cycles, labels 0 tree / 1 cycle.
Tree-Grid:   the same tree + 80 3×3 grids, labels 0 tree / 1 grid.
Each motif is glued to a uniformly random base node by one edge from its node 0 (not ground truth); the motif
edges are the ground truth.  Features are constant (0.1·𝟙₁₀), so only structure carries the label.  The extra
random edges of the original GNNExplainer generator are not added (PyG's generator does not add them either).

Explaining node t (design choice that lets every graph-level explainer run unchanged): its k-hop computation
subgraph is extracted, relabelled so that t is node 0 and zero-padded to N_max; the GNN's "graph" output on such a
subgraph is the logit vector of node 0.  Padding nodes are isolated and have zero features, so they never reach
node 0.  As in the PGExplainer replication, the GNN is re-run on the induced subgraph (degrees of the outermost
ring can differ from the full graph, so ŷ is the subgraph prediction).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from compute.ssdg_explainer.data import GraphSet
from compute.ssdg_explainer.gnn import DenseGCNLayer, gcn_norm

HOUSE = ([(0, 1), (1, 2), (2, 3), (3, 0), (4, 0), (4, 1)], [2, 2, 3, 3, 1])  # square 0-1-2-3, roof 4
CYCLE6 = ([(i, (i + 1) % 6) for i in range(6)], [1] * 6)
GRID3 = (
    [(3 * r + c, 3 * r + c + 1) for r in range(3) for c in range(2)]
    + [(3 * r + c, 3 * (r + 1) + c) for r in range(2) for c in range(3)],
    [1] * 9,
)
NODE_DATASETS = ("ba_shapes", "tree_cycles", "tree_grid")


def ba_graph(rng: np.random.Generator, n: int, m: int) -> list[tuple[int, int]]:
    """Barabási–Albert: a star on m + 1 nodes, then each new node links to m distinct nodes ∝ degree."""
    edges = [(0, v) for v in range(1, m + 1)]
    deg = np.zeros(n)
    deg[0], deg[1 : m + 1] = m, 1
    for v in range(m + 1, n):
        p = deg[:v] / deg[:v].sum()
        for u in rng.choice(v, size=m, replace=False, p=p):
            edges.append((int(u), v))
            deg[u] += 1
        deg[v] = m
    return edges


def binary_tree(depth: int) -> list[tuple[int, int]]:
    """Balanced binary tree with 2^(depth+1) − 1 nodes (children of v: 2v + 1, 2v + 2)."""
    n = 2 ** (depth + 1) - 1
    return [((v - 1) // 2, v) for v in range(1, n)]


def node_dataset(name: str, n_motifs: int = 80, seed: int = 0) -> dict:
    """Full graph of a node benchmark: {"A" (n, n), "X" (n, 10), "y" (n,), "gt" (n, n), "n_base", "motif" (n,)}.

    ``motif[v]`` is the index of v's motif (−1 for base nodes)."""
    rng = np.random.default_rng(seed)
    if name == "ba_shapes":
        n_base, base, (medges, mlabels) = 300, ba_graph(rng, 300, 5), HOUSE
    elif name == "tree_cycles":
        n_base, base, (medges, mlabels) = 511, binary_tree(8), CYCLE6
    elif name == "tree_grid":
        n_base, base, (medges, mlabels) = 511, binary_tree(8), GRID3
    else:
        raise ValueError(f"unknown node data set {name!r}")
    k = len(mlabels)
    n = n_base + n_motifs * k
    A = np.zeros((n, n), dtype=np.float32)
    gt = np.zeros_like(A)
    y = np.zeros(n, dtype=np.int64)
    motif = -np.ones(n, dtype=np.int64)
    for u, v in base:
        A[u, v] = A[v, u] = 1
    for j in range(n_motifs):
        off = n_base + j * k
        for u, v in medges:
            A[off + u, off + v] = A[off + v, off + u] = 1
            gt[off + u, off + v] = gt[off + v, off + u] = 1
        y[off : off + k] = mlabels
        motif[off : off + k] = j
        b = int(rng.integers(n_base))
        A[b, off] = A[off, b] = 1  # attachment edge: not ground truth
    X = np.full((n, 10), 0.1, dtype=np.float32)
    return {
        "A": torch.tensor(A),
        "X": torch.tensor(X),
        "y": torch.tensor(y),
        "gt": torch.tensor(gt),
        "n_base": n_base,
        "motif": torch.tensor(motif),
        "name": name,
    }


NODE_ARCHS = ("gcn", "gnnexplainer")


class NodeGCN(nn.Module):
    """3 graph-conv layers (hidden 20); node logits = Linear([h¹ ‖ h² ‖ h³]) (GNNExplainer's node model).

    ``arch="gcn"``: normalised propagation D̃^{-1/2}(W + I)D̃^{-1/2}, ReLU after every layer.
    ``arch="gnnexplainer"``: the GNNExplainer code's ``GcnEncoderNode`` with concat: raw propagation W (no self
    loop, no degree normalisation), each layer's output L2-normalised, ReLU after the first two only, Xavier
    initialisation (ReLU gain) and zero biases.

    ``forward(X, W)`` on a batch of padded computation subgraphs returns the logits of node 0 (the target), so the
    graph-level explainers apply unchanged; ``node_logits`` gives every node's logits."""

    def __init__(self, in_dim: int, hidden: int = 20, n_layers: int = 3, n_classes: int = 4, arch: str = "gcn") -> None:
        super().__init__()
        if arch not in NODE_ARCHS:
            raise ValueError(f"unknown node GNN architecture {arch!r}")
        dims = [in_dim] + [hidden] * n_layers
        self.layers = nn.ModuleList(DenseGCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:], strict=True))
        self.head = nn.Linear(n_layers * hidden, n_classes)
        self.hidden = n_layers * hidden
        self.arch = arch
        self.aggregation = "gcn" if arch == "gcn" else "sum"
        self.node_task = True
        if arch == "gnnexplainer":
            for layer in self.layers:
                nn.init.xavier_uniform_(layer.lin.weight, gain=nn.init.calculate_gain("relu"))

    def node_embed(self, X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        H, outs = X, []
        if self.arch == "gcn":
            An = gcn_norm(W)
            for layer in self.layers:
                H = torch.relu(layer(H, An))
                outs.append(H)
        else:
            last = len(self.layers) - 1
            for i, layer in enumerate(self.layers):
                H = nn.functional.normalize(layer(H, W), p=2, dim=-1)
                if i < last:
                    H = torch.relu(H)
                outs.append(H)
        return torch.cat(outs, dim=-1)

    def node_logits(self, X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        return self.head(self.node_embed(X, W))

    def graph_embed(self, X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        """φ = the target's (node 0's) embedding: the semantic losses compare it."""
        return self.node_embed(X, W)[:, 0]

    def forward(self, X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        return self.head(self.graph_embed(X, W))


def train_node_gnn(
    full: dict,
    epochs: int = 300,
    lr: float = 0.01,
    seed: int = 0,
    train_frac: float = 0.8,
    on_epoch=None,
    arch: str = "gcn",
) -> tuple[NodeGCN, dict[str, float]]:
    """Full-batch Adam + cross-entropy on a seeded 80/20 node split; returns (model, {train_acc, test_acc}).

    ``arch="gcn"``: lr ``lr``, weight decay 5e-4, cosine learning rate.  ``arch="gnnexplainer"``: the GNNExplainer
    code's node-training recipe, lr 1e-3, weight decay 5e-3, gradient-norm clip 2.0, constant learning rate
    (``lr`` is ignored)."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    n = len(full["y"])
    perm = torch.randperm(n, generator=g)
    tr, te = perm[: int(train_frac * n)], perm[int(train_frac * n) :]
    X, A, y = full["X"].unsqueeze(0), full["A"].unsqueeze(0), full["y"]
    model = NodeGCN(X.shape[-1], n_classes=int(y.max()) + 1, arch=arch)
    recipe = arch == "gnnexplainer"
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if recipe else lr, weight_decay=5e-3 if recipe else 5e-4)
    sched = None if recipe else torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)  # damps oscillations
    for ep in range(epochs):
        logits = model.node_logits(X, A)[0]
        loss = nn.functional.cross_entropy(logits[tr], y[tr])
        opt.zero_grad()
        loss.backward()
        if recipe:
            nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        opt.step()
        if sched is not None:
            sched.step()
        if on_epoch is not None and (ep % 10 == 9 or ep == epochs - 1):
            with torch.no_grad():
                acc = float((logits.argmax(-1)[te] == y[te]).float().mean())
            on_epoch(ep + 1, float(loss.detach()), acc)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        pred = model.node_logits(X, A)[0].argmax(-1)
    stats = {
        "train_acc": float((pred[tr] == y[tr]).float().mean()),
        "test_acc": float((pred[te] == y[te]).float().mean()),
    }
    return model, stats


def khop_nodes(A: torch.Tensor, t: int, k: int) -> list[int]:
    """Nodes within k hops of t, t first, then by BFS order."""
    order, seen, frontier = [t], {t}, [t]
    for _ in range(k):
        nxt = []
        for u in frontier:
            for v in torch.nonzero(A[u]).flatten().tolist():
                if v not in seen:
                    seen.add(v)
                    order.append(v)
                    nxt.append(v)
        frontier = nxt
    return order


def computation_subgraphs(full: dict, targets: list[int], k: int = 3, n_max: int | None = None) -> GraphSet:
    """Padded k-hop subgraphs, target at index 0: a GraphSet whose "graph label" is the target's label."""
    subs = [khop_nodes(full["A"], t, k) for t in targets]
    N = n_max or max(len(s) for s in subs)
    B, F = len(targets), full["X"].shape[-1]
    X = torch.zeros(B, N, F)
    A = torch.zeros(B, N, N)
    gt = torch.zeros(B, N, N)
    for b, s in enumerate(subs):
        s = s[:N]
        idx = torch.tensor(s)
        X[b, : len(s)] = full["X"][idx]
        A[b, : len(s), : len(s)] = full["A"][idx][:, idx]
        gt[b, : len(s), : len(s)] = full["gt"][idx][:, idx]
    y = full["y"][torch.tensor(targets)]
    size = {"ba_shapes": 6, "tree_cycles": 6, "tree_grid": 12}[full["name"]]
    return GraphSet(full["name"], X, A, y, gt, size)

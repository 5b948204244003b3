"""The GNN to explain: 3 dense GCN layers (hidden 20, ReLU) and a concat(mean, max, sum) readout (spec §2).

Edge weights enter message passing through the GCN normalisation D̃^{-1/2}(W + I)D̃^{-1/2}, D̃ = diag((W + I)𝟙),
so a soft mask m or a dense proxy Â reaches every layer (spec pitfall "edge weights in GCN").
"""

from __future__ import annotations

import torch
from torch import nn

from compute.ssdg_explainer.data import GraphSet


def gcn_norm(W: torch.Tensor) -> torch.Tensor:
    """D̃^{-1/2}(W + I)D̃^{-1/2} for a batch of weighted adjacencies W (B, N, N)."""
    Wt = W + torch.eye(W.shape[-1], dtype=W.dtype, device=W.device)
    dinv = Wt.sum(-1).clamp(min=1e-8).rsqrt()
    return dinv.unsqueeze(-1) * Wt * dinv.unsqueeze(-2)


class DenseGCNLayer(nn.Module):
    """H' = Â (H Θ) + b: the bias is added after propagation, as in PyG's ``GCNConv``.

    (With constant input features, a bias inside the propagation is scaled by the row sums of Â like the features,
    so every node's pre-activation points the same way and an L2-normalised GCN cannot tell nodes apart.)
    """

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, H: torch.Tensor, An: torch.Tensor) -> torch.Tensor:
        return An @ self.lin(H) + self.bias


class GCN(nn.Module):
    """3 × GCN + ReLU; φ(G) = [mean ‖ max ‖ sum] of node embeddings; logits = Linear(φ)."""

    def __init__(
        self,
        in_dim: int,
        hidden: int = 20,
        n_layers: int = 3,
        n_classes: int = 2,
        aggregation: str = "gcn",
        l2norm: bool = False,
    ) -> None:
        super().__init__()
        self.aggregation = aggregation  # "gcn": D̃^{-1/2}(W+I)D̃^{-1/2};  "sum": W + I (GIN-style, design choice)
        self.l2norm = l2norm  # row-wise L2 normalisation after each layer (PGExplainer replication's GraphGCN)
        dims = [in_dim] + [hidden] * n_layers
        self.layers = nn.ModuleList(DenseGCNLayer(a, b) for a, b in zip(dims[:-1], dims[1:], strict=True))
        self.head = nn.Linear(3 * hidden, n_classes)
        self.hidden = hidden

    def node_embed(self, X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        """Node embeddings (B, N, hidden) of the last layer."""
        An = gcn_norm(W) if self.aggregation == "gcn" else W + torch.eye(W.shape[-1], dtype=W.dtype, device=W.device)
        H = X
        for layer in self.layers:
            H = layer(H, An)
            if self.l2norm:
                H = nn.functional.normalize(H, p=2, dim=-1)
            H = torch.relu(H)
        return H

    def graph_embed(self, X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        """φ(G) (B, 3·hidden): the readout embedding used by the semantic losses."""
        H = self.node_embed(X, W)
        return torch.cat([H.mean(1), H.amax(1), H.sum(1)], dim=-1)

    def forward(self, X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        return self.head(self.graph_embed(X, W))


class AccuracyGateError(RuntimeError):
    """Raised when the GNN is not accurate enough to be explained (spec: ≥ 0.95 test accuracy)."""


def train_gnn(
    data: GraphSet,
    epochs: int = 150,
    lr: float = 0.01,
    batch_size: int = 64,
    seed: int = 0,
    train_frac: float = 0.8,
    aggregation: str = "gcn",
    l2norm: bool = False,
    on_epoch=None,
) -> tuple[GCN, dict[str, float]]:
    """Train the GCN with Adam + cross-entropy on a seeded 80/20 split; returns (model, {train_acc, test_acc})."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(data), generator=g)
    n_tr = int(train_frac * len(data))
    tr, te = perm[:n_tr], perm[n_tr:]
    model = GCN(data.X.shape[-1], aggregation=aggregation, l2norm=l2norm)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for ep in range(epochs):
        model.train()
        order = tr[torch.randperm(n_tr, generator=g)]
        total = 0.0
        for i in range(0, n_tr, batch_size):
            b = order[i : i + batch_size]
            loss = nn.functional.cross_entropy(model(data.X[b], data.A[b]), data.y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(b)
        if on_epoch is not None and (ep % 5 == 4 or ep == epochs - 1):
            on_epoch(ep + 1, total / n_tr, accuracy(model, data.subset(te)))
    stats = {"train_acc": accuracy(model, data.subset(tr)), "test_acc": accuracy(model, data.subset(te))}
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, stats


@torch.no_grad()
def accuracy(model: GCN, data: GraphSet) -> float:
    """Fraction of graphs whose argmax prediction equals the label."""
    return float((model(data.X, data.A).argmax(-1) == data.y).float().mean())


def check_gate(stats: dict[str, float], gate: float = 0.95) -> None:
    """Refuse to explain a GNN whose test accuracy is below ``gate``."""
    if stats["test_acc"] < gate - 1e-6:  # float32 accuracies: 0.95 may read 0.9499999
        raise AccuracyGateError(f"GNN test accuracy {stats['test_acc']:.3f} < gate {gate:.2f}: not explaining it")

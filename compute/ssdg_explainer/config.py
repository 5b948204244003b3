"""One config dataclass for the explanation experiments, mirroring the parameters declared in apps/ssdg_explainer."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

ALL_METHODS = ["random", "degree", "grad", "gnnexplainer", "pgexplainer", "mixup", "proxy", "ssdg"]


@dataclass
class ExplainConfig:
    """Data set, GNN, explainer budget and SSDG switches (shared by all four experiments)."""

    dataset: str = "syn_mutag"  # syn_mutag | ba_2motifs | ba_shapes | tree_cycles | tree_grid
    n_graphs: int = 400  # graphs generated (80/20 GNN split)
    equalize_edges: bool = True  # BA-2Motifs: remove the house/cycle edge-count shortcut
    gnn_epochs: int = 40
    node_arch: str = "gcn"  # node tasks: gcn (normalised GCN) | gnnexplainer (the GNNExplainer code's model + recipe)
    gate: float = 0.95  # refuse to explain a GNN below this test accuracy
    n_explain: int = 100  # graphs explained (balanced over classes); node tasks: motif nodes explained
    explainer_epochs: int = 20
    methods: list[str] = field(default_factory=lambda: list(ALL_METHODS))
    n_seeds: int = 2  # explainer seeds (the GNN is trained once per run seed)
    gen_steps: int = 5  # generator steps per explainer step (released code: 10)
    batch_size: int = 50
    lr: float = 0.003
    c_size: float = 0.05
    c_ent: float = 1.0
    t0: float = 5.0
    t1: float = 2.0
    semantic: bool = True
    boundary: bool = True
    contrastive: bool = True
    lam_s: float = 0.1
    lam_c: float = 0.1
    lam_b: float = 0.05
    complement: str = "paper"  # Proxy/SSDG complement branch: paper | detached | no_restore
    noise_levels: list[float] = field(default_factory=lambda: [0.0, 0.1, 0.2, 0.3])
    seed: int = 0

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> ExplainConfig:
        """Build from validated params; boolean ``m_<method>`` switches become ``methods``."""
        names = {f.name for f in fields(cls)}
        cfg = cls(**{k: v for k, v in params.items() if k in names})
        picked = [m for m in ALL_METHODS if params.get(f"m_{m}", False)]
        if any(f"m_{m}" in params for m in ALL_METHODS):
            cfg.methods = picked
        return cfg

    def gnn_kwargs(self) -> dict[str, Any]:
        """Dataset-specific GNN training (design choice): BA-2Motifs needs sum aggregation and more steps."""
        if self.dataset in ("ba_shapes", "tree_cycles", "tree_grid"):
            return {"aggregation": "gcn", "lr": 0.01}
        if self.dataset == "ba_2motifs":
            return {"aggregation": "sum", "lr": 0.003, "batch_size": 32}
        return {"aggregation": "gcn", "lr": 0.01, "batch_size": 64}

"""Known-answer tests: ground truth, AUROC, masks, schedule, InfoNCE, proxy adjacency, fidelity, gate, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import mannwhitneyu

from compute.ssdg_explainer.data import add_noise_edges, ba_2motifs, syn_mutag
from compute.ssdg_explainer.explainers import (
    AmortizedConfig,
    AmortizedExplainer,
    concrete_mask,
    gnn_explainer,
    info_nce,
    temperature,
)
from compute.ssdg_explainer.gnn import GCN, AccuracyGateError, check_gate, train_gnn
from compute.ssdg_explainer.metrics import auroc, edge_auroc, fidelity, mmd_rbf, topk_mask

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def mutag():
    return syn_mutag(120, seed=0)


@pytest.fixture(scope="module")
def trained(mutag):
    model, stats = train_gnn(mutag, epochs=25, seed=0)
    return model, stats


def test_ba2motifs_ground_truth_counts() -> None:
    d = ba_2motifs(20, seed=1)
    n_gt = d.gt.sum((1, 2)) / 2
    assert torch.equal(n_gt[d.y == 0], torch.full((10,), 6.0))  # house: 6 undirected edges
    assert torch.equal(n_gt[d.y == 1], torch.full((10,), 5.0))  # five-cycle: 5
    assert torch.all(d.gt <= d.A)  # ground truth ⊂ edges
    assert torch.all(d.gt[:, :20, :].sum((1, 2)) == 0)  # no base node touches a gt edge from the base side...
    # ...so the attachment edge (base–motif) and all BA edges are excluded
    assert torch.all((d.A.sum((1, 2)) / 2) == 19 + 6 + 1)  # equalised: BA tree 19 + 6 + attachment
    raw = ba_2motifs(20, seed=1, equalize_edges=False)
    assert torch.equal(raw.A.sum((1, 2))[raw.y == 1] / 2, torch.full((10,), 25.0))  # the shortcut, 26 vs 25
    for g in (d.A, d.gt):
        assert torch.equal(g, g.transpose(1, 2)) and torch.all(torch.diagonal(g, dim1=1, dim2=2) == 0)


def test_synmutag_groups(mutag) -> None:
    d = mutag
    assert torch.all(d.gt.sum((1, 2)) / 2 == 3)  # C–N + two N–X
    assert torch.equal(d.A.sum((1, 2))[d.y == 0].unique(), d.A.sum((1, 2))[d.y == 1].unique())  # equal edge counts
    assert torch.equal(d.X.sum(1)[d.y == 0].unique(dim=0), d.X.sum(1)[d.y == 1].unique(dim=0))  # equal atom counts
    n = 17  # the N atom has degree 3 in a nitro group (label 1) and 2 in an N–O–O chain (label 0)
    assert torch.all(d.A[d.y == 1, n].sum(-1) == 3) and torch.all(d.A[d.y == 0, n].sum(-1) == 2)
    assert torch.equal(d.A * (1 - d.gt), (d.A * (1 - d.gt)).clamp(max=1))  # complement: carbons only
    assert torch.all((d.A * (1 - d.gt))[:, n:, :].sum((1, 2)) == 0)


def test_auroc_matches_pairwise_definition_and_limits() -> None:
    """AUROC = P(s⁺ > s⁻) + ½P(s⁺ = s⁻) = U/(n⁺n⁻) (sklearn's roc_auc_score gives the same; scipy's U here)."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        s = rng.integers(0, 5, 40).astype(float)  # many ties
        lab = rng.integers(0, 2, 40)
        pos, neg = s[lab == 1], s[lab == 0]
        pair = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (
            len(pos) * len(neg)
        )
        assert auroc(s, lab) == pytest.approx(pair, abs=1e-12)
        assert auroc(s, lab) == pytest.approx(mannwhitneyu(pos, neg).statistic / (len(pos) * len(neg)), abs=1e-12)
    lab = np.array([0, 1, 1, 0, 1])
    assert auroc(lab.astype(float), lab) == 1.0
    assert auroc(1.0 - lab, lab) == 0.0
    assert auroc(np.ones(5), lab) == 0.5


def test_perfect_mask_edge_auroc_is_one_and_undirected() -> None:
    d = ba_2motifs(6, seed=2)
    auc, per = edge_auroc(d.gt.clone(), d.A, d.gt)
    assert auc == 1.0 and all(p == 1.0 for p in per)
    auc_inv, _ = edge_auroc(1 - d.gt, d.A, d.gt)
    assert auc_inv == 0.0


def test_concrete_mask_symmetric_hard_and_eval() -> None:
    g = torch.Generator().manual_seed(0)
    A = ba_2motifs(2, seed=0).A
    omega = torch.randn(A.shape, generator=g)
    omega = 0.5 * (omega + omega.transpose(1, 2))
    m = concrete_mask(omega, A, T=1.0, training=True, gen=g)
    assert torch.allclose(m, m.transpose(1, 2))
    hard = concrete_mask(omega, A, T=1e-4, training=True, gen=g)
    vals = hard[A > 0]
    assert torch.all((vals < 1e-3) | (vals > 1 - 1e-3))  # T → 0: binary
    assert torch.allclose(concrete_mask(omega, A, T=5.0, training=False), torch.sigmoid(omega) * A)


def test_temperature_schedule() -> None:
    assert temperature(0, 30, 5.0, 2.0) == pytest.approx(5.0)
    assert temperature(30, 30, 5.0, 2.0) == pytest.approx(2.0)
    assert temperature(15, 30, 5.0, 2.0) == pytest.approx(math.sqrt(10.0))  # geometric midpoint


def test_info_nce_equal_similarities_is_log_k() -> None:
    a = torch.tensor([1.0, 0.0, 0.0])
    for K in (2, 5, 9):
        negs = a.repeat(K - 1, 1)
        assert float(info_nce(a, a.clone(), negs, tau=0.5)) == pytest.approx(math.log(K), abs=1e-6)


def test_mmd_zero_for_identical_sets() -> None:
    P = np.random.default_rng(0).normal(size=(20, 4))
    assert mmd_rbf(P, P) == pytest.approx(0.0, abs=1e-12)
    assert mmd_rbf(P, P + 3.0) > 0.1


def test_fidelity_of_full_and_empty_explanations(mutag, trained) -> None:
    model, _ = trained
    full = fidelity(model, mutag.X, mutag.A, mutag.A.clone())
    assert full["fid_minus"] == 0.0  # keeping the whole graph keeps every prediction
    empty = fidelity(model, mutag.X, mutag.A, torch.zeros_like(mutag.A))
    assert empty["fid_plus"] == 0.0  # removing nothing changes nothing
    assert full["sparsity"] == pytest.approx(0.0) and empty["sparsity"] == pytest.approx(1.0)


def test_accuracy_gate(trained) -> None:
    _, stats = trained
    assert stats["test_acc"] >= 0.95  # SynMUTAG is learnable in 25 epochs
    check_gate(stats, 0.95)
    with pytest.raises(AccuracyGateError):
        check_gate({"train_acc": 0.9, "test_acc": 0.94}, 0.95)


def test_gcn_edge_weights_reach_message_passing(mutag) -> None:
    torch.manual_seed(0)
    model = GCN(3)
    out_full = model(mutag.X[:4], mutag.A[:4])
    out_half = model(mutag.X[:4], 0.5 * mutag.A[:4])
    assert not torch.allclose(out_full, out_half)


def test_explainers_deterministic_and_proxy_valid(mutag, trained) -> None:
    model, _ = trained
    ex = mutag.subset(list(range(50, 70)))
    cfg = AmortizedConfig(method="ssdg", epochs=2, batch_size=10, gen_steps=2)
    masks = []
    for _ in range(2):
        e = AmortizedExplainer(model, 3, 20, cfg, seed=3)
        e.fit(ex.X, ex.A, seed=3)
        masks.append(e.explain(ex.X, ex.A))
    assert torch.equal(masks[0], masks[1])
    m = masks[0]
    assert torch.allclose(m, m.transpose(1, 2)) and torch.all(m[ex.A == 0] == 0)
    y_hat = model(ex.X, ex.A).argmax(-1)
    with torch.no_grad():
        P, A_M, _ = e.proxy(ex.X, ex.A, m, y_hat)
    assert torch.allclose(P, P.transpose(1, 2), atol=1e-6)
    assert torch.all(torch.diagonal(P, dim1=1, dim2=2) == 0) and P.min() >= 0 and P.max() <= 1
    g1 = gnn_explainer(model, ex.X, ex.A, epochs=3, seed=5)
    g2 = gnn_explainer(model, ex.X, ex.A, epochs=3, seed=5)
    assert torch.equal(g1, g2)


def test_explanation_edges_survive_in_proxy(mutag, trained) -> None:
    """Integration: after training, Â_uv > 0.5 wherever m_uv > 0.9 (the MSE tie Â_M ≈ m)."""
    model, _ = trained
    ex = mutag.subset(list(range(40, 80)))
    e = AmortizedExplainer(model, 3, 20, AmortizedConfig(method="proxy", epochs=4, batch_size=20, gen_steps=5, lr=0.01))
    e.fit(ex.X, ex.A, seed=0)
    m = e.explain(ex.X, ex.A)
    with torch.no_grad():
        P, _, _ = e.proxy(ex.X, ex.A, m, model(ex.X, ex.A).argmax(-1))
    sel = m > 0.9
    if sel.any():
        assert float((P[sel] > 0.5).float().mean()) >= 0.95
    assert float((P[ex.A > 0] > 0.5).float().mean()) > 0.5  # the generator reconstructs most edges


def test_noise_adds_the_requested_edges() -> None:
    A = ba_2motifs(3, seed=0).A
    B = add_noise_edges(A, 0.2, seed=0)
    assert torch.all(B >= A) and torch.equal(B, B.transpose(1, 2))
    assert torch.all((B.sum((1, 2)) - A.sum((1, 2))) / 2 == int(0.2 * 26))


def test_topk_mask_picks_k_edges() -> None:
    d = ba_2motifs(4, seed=0)
    hard = topk_mask(d.gt + 0.01 * d.A, d.A, 6)
    assert torch.all(hard.sum((1, 2)) / 2 == 6)
    assert torch.equal(hard[d.y == 0], d.gt[d.y == 0])  # houses: the top 6 are the gt edges


# ---- node tasks and the complement variants --------------------------------------------------------------
@pytest.mark.parametrize(
    "name,n,edges,gt_edges,counts",
    [
        ("ba_shapes", 700, 5 + 294 * 5 + 80 * 6 + 80, 480, {0: 300, 1: 80, 2: 160, 3: 160}),
        ("tree_cycles", 511 + 480, 510 + 480 + 80, 480, {0: 511, 1: 480}),
        ("tree_grid", 511 + 720, 510 + 80 * 12 + 80, 960, {0: 511, 1: 720}),
    ],
)
def test_node_generators_documented_counts(name, n, edges, gt_edges, counts) -> None:
    from compute.ssdg_explainer.nodes import node_dataset

    d = node_dataset(name, seed=3)
    A, gt = d["A"], d["gt"]
    assert A.shape == (n, n) and torch.equal(A, A.T) and float(torch.diagonal(A).abs().sum()) == 0
    assert int(A.sum()) // 2 == edges and int(gt.sum()) // 2 == gt_edges
    assert torch.all(gt <= A)  # ground truth ⊂ edges; attachment edges are not ground truth
    assert int(gt[: d["n_base"]].sum()) == 0  # no base node touches a ground-truth edge
    assert {int(k): int(v) for k, v in zip(*torch.unique(d["y"], return_counts=True), strict=True)} == counts
    motif_sizes = torch.unique(d["motif"][d["motif"] >= 0], return_counts=True)[1]
    assert len(motif_sizes) == 80 and len(set(motif_sizes.tolist())) == 1


def test_node_subgraph_logits_exact_with_one_extra_hop() -> None:
    """A 3-layer GCN's output at t depends on features and degrees within 3 hops, so the padded 4-hop subgraph
    reproduces the full-graph logits exactly; padding never changes them."""
    from compute.ssdg_explainer.nodes import NodeGCN, computation_subgraphs, node_dataset

    full = node_dataset("tree_cycles", n_motifs=10, seed=0)
    torch.manual_seed(0)
    model = NodeGCN(10, n_classes=2)
    targets = [511, 520, 540, 3, 100]
    ref = model.node_logits(full["X"].unsqueeze(0), full["A"].unsqueeze(0))[0, targets]
    sub4 = computation_subgraphs(full, targets, k=4)
    assert torch.allclose(model(sub4.X, sub4.A), ref, atol=1e-5)
    padded = computation_subgraphs(full, targets, k=4, n_max=sub4.A.shape[-1] + 7)
    assert torch.allclose(model(padded.X, padded.A), ref, atol=1e-5)
    sub3 = computation_subgraphs(full, targets, k=3)
    assert torch.all(sub3.gt <= sub3.A) and sub3.gt.sum() > 0


def test_pair_hidden_equals_linear_on_concatenation() -> None:
    from compute.ssdg_explainer.explainers import pair_features, pair_hidden

    torch.manual_seed(0)
    H = torch.randn(2, 5, 4)
    lin = torch.nn.Linear(12, 7)
    full = lin(torch.cat([pair_features(H), H[:, 0][:, None, None, :].expand(2, 5, 5, 4)], dim=-1))
    assert torch.allclose(pair_hidden(lin, H, H, H[:, 0]), full, atol=1e-5)


def test_no_restore_proxy_carries_the_mask_on_graph_edges(mutag, trained) -> None:
    """complement="no_restore": on the edges of G the proxy is exactly m; "paper" lets the generator restore them."""
    model, _ = trained
    ex = mutag.subset(list(range(55, 65)))
    y_hat = model(ex.X, ex.A).argmax(-1)
    m = 0.3 * ex.A
    for mode in ("paper", "detached", "no_restore"):
        e = AmortizedExplainer(model, 3, 20, AmortizedConfig(method="proxy", complement=mode), seed=0)
        with torch.no_grad():
            P, _, _ = e.proxy(ex.X, ex.A, m, y_hat)
        on_edges = torch.allclose(P[ex.A > 0], m[ex.A > 0])
        assert on_edges == (mode == "no_restore")


def test_node_task_explainers_run_on_padded_subgraphs_deterministically() -> None:
    """PGExplainer ([h_u ‖ h_v ‖ h_target]) and SSDG (4-class one-hot) on padded node subgraphs: seeded masks are
    identical, symmetric and zero off the edges (padding included)."""
    from compute.ssdg_explainer.config import ExplainConfig
    from compute.ssdg_explainer.nodes import NodeGCN, computation_subgraphs, node_dataset
    from compute.ssdg_explainer.run import run_method

    full = node_dataset("tree_cycles", n_motifs=6, seed=0)
    ex = computation_subgraphs(full, list(range(511, 523)), k=3)
    torch.manual_seed(0)
    model = NodeGCN(10, n_classes=4).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    cfg = ExplainConfig(explainer_epochs=1, batch_size=6, gen_steps=1)
    for method in ("pgexplainer", "ssdg"):
        m1 = run_method(method, model, ex, cfg, seed=2)[0]
        m2 = run_method(method, model, ex, cfg, seed=2)[0]
        assert torch.equal(m1, m2) and torch.allclose(m1, m1.transpose(1, 2))
        assert torch.all(m1[ex.A == 0] == 0)


def test_build_step_caches_the_gnn_that_prepare_loads(tmp_path) -> None:
    from compute.core.reporter import MemoryReporter
    from compute.ssdg_explainer.config import ExplainConfig
    from compute.ssdg_explainer.run import build_gnn, gnn_cache_key, prepare

    params = {"dataset": "syn_mutag", "n_graphs": 100, "gnn_epochs": 2, "gate": 0.5}
    rep = MemoryReporter(data_dir=tmp_path)
    first = build_gnn(params, rep)
    key = gnn_cache_key(ExplainConfig.from_params(params))
    assert first["cached"] is False and first["checkpoint"] == key
    assert (tmp_path / "ssdg_explainer" / key).exists()
    assert build_gnn(params, MemoryReporter(data_dir=tmp_path))["cached"] is True
    cfg = ExplainConfig.from_params(params | {"n_explain": 10})
    _, model, _, stats = prepare(cfg, MemoryReporter(data_dir=tmp_path))
    saved = torch.load(tmp_path / "ssdg_explainer" / key, weights_only=False)
    assert stats == saved["stats"]
    for name, w in model.state_dict().items():
        assert torch.equal(w, saved["state"][name])
    # a different GNN setting is a different checkpoint; rebuild retrains in place
    assert gnn_cache_key(ExplainConfig.from_params(params | {"gnn_epochs": 3})) != key
    assert build_gnn(params | {"rebuild": True}, MemoryReporter(data_dir=tmp_path))["cached"] is False


def test_gnnexplainer_node_model_is_exact_on_three_hop_subgraphs() -> None:
    """Without degree normalisation a 3-layer model at t depends only on the 3-hop induced subgraph (unlike the
    normalised GCN, which needs one extra hop); its layer outputs are unit vectors (L2 normalisation)."""
    from compute.ssdg_explainer.nodes import NodeGCN, computation_subgraphs, node_dataset

    full = node_dataset("tree_cycles", n_motifs=10, seed=0)
    torch.manual_seed(0)
    model = NodeGCN(10, n_classes=2, arch="gnnexplainer")
    targets = [511, 520, 540, 3, 100]
    X, A = full["X"].unsqueeze(0), full["A"].unsqueeze(0)
    ref = model.node_logits(X, A)[0, targets]
    sub3 = computation_subgraphs(full, targets, k=3)
    assert torch.allclose(model(sub3.X, sub3.A), ref, atol=1e-5)
    H = model.node_embed(X, A)[0].view(-1, 3, 20)
    assert torch.allclose(H[:, 2].norm(dim=-1), torch.ones(H.shape[0]), atol=1e-4)
    with pytest.raises(ValueError):
        NodeGCN(10, arch="gin")

"""Metrics: edge AUROC vs ground truth, fidelity±, sparsity, and in-distribution (OOD) scores (spec §2 Metrics)."""

from __future__ import annotations

import numpy as np
import torch


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """ROC AUC = P(s⁺ > s⁻) + ½P(s⁺ = s⁻) via average ranks (Mann–Whitney U); NaN if one class is absent."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels).astype(bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores), dtype=np.float64)
    s = scores[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[order[i : j + 1]] = 0.5 * (i + j) + 1.0
        i = j + 1
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def undirected_edges(A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Upper-triangle indices (rows, cols) of the existing edges of one graph: each undirected edge once."""
    iu = torch.triu_indices(A.shape[-1], A.shape[-1], 1)
    keep = A[iu[0], iu[1]] > 0
    return iu[0][keep], iu[1][keep]


def edge_auroc(masks: torch.Tensor, A: torch.Tensor, gt: torch.Tensor) -> tuple[float, list[float]]:
    """Per-graph edge AUROC over unique undirected edges, averaged over graphs having both classes."""
    per = []
    for b in range(A.shape[0]):
        r, c = undirected_edges(A[b])
        per.append(auroc(masks[b, r, c].detach().numpy(), gt[b, r, c].numpy()))
    valid = [p for p in per if not np.isnan(p)]
    return (float(np.mean(valid)) if valid else float("nan")), per


def roc_curve_points(masks: torch.Tensor, A: torch.Tensor, gt: torch.Tensor, n: int = 50) -> tuple[list, list]:
    """Pooled ROC (FPR, TPR) over all explained edges, with per-graph min–max normalised scores."""
    s_all, l_all = [], []
    for b in range(A.shape[0]):
        r, c = undirected_edges(A[b])
        s = masks[b, r, c].detach().numpy().astype(np.float64)
        s = (s - s.min()) / (s.max() - s.min() + 1e-12)
        s_all.append(s)
        l_all.append(gt[b, r, c].numpy() > 0)
    s, lab = np.concatenate(s_all), np.concatenate(l_all)
    thr = np.linspace(1.0 + 1e-9, -1e-9, n)
    P, Nn = max(lab.sum(), 1), max((~lab).sum(), 1)
    tpr = [float(((s >= t) & lab).sum() / P) for t in thr]
    fpr = [float(((s >= t) & ~lab).sum() / Nn) for t in thr]
    return fpr, tpr


def topk_mask(masks: torch.Tensor, A: torch.Tensor, k: int) -> torch.Tensor:
    """Hard explanation: the k highest-scoring undirected edges of each graph (ties broken by index)."""
    out = torch.zeros_like(A)
    for b in range(A.shape[0]):
        r, c = undirected_edges(A[b])
        if len(r) == 0:
            continue
        top = torch.argsort(masks[b, r, c].detach(), descending=True, stable=True)[:k]
        out[b, r[top], c[top]] = 1.0
        out[b, c[top], r[top]] = 1.0
    return out


@torch.no_grad()
def fidelity(model, X: torch.Tensor, A: torch.Tensor, hard: torch.Tensor) -> dict[str, float]:
    """Model-fidelity (PyG ``fidelity`` with explanation_type="model"), S = hard explanation subgraph.

    fid+ = 1 − mean 1[f(G∖S) = f(G)],  fid− = 1 − mean 1[f(S) = f(G)],
    characterization = 2 / (1/fid+ + 1/(1 − fid−))  (w₊ = w₋ = ½), sparsity = 1 − |S|/|E|.
    """
    y_hat = model(X, A).argmax(-1)
    keep = model(X, A * hard).argmax(-1)
    drop = model(X, A * (1 - hard)).argmax(-1)
    fid_p = 1.0 - float((drop == y_hat).float().mean())
    fid_m = 1.0 - float((keep == y_hat).float().mean())
    charact = 0.0 if fid_p == 0 or fid_m == 1 else 2.0 / (1.0 / fid_p + 1.0 / (1.0 - fid_m))
    sparsity = 1.0 - float((hard.sum((1, 2)) / A.sum((1, 2)).clamp(min=1)).mean())
    return {"fid_plus": fid_p, "fid_minus": fid_m, "charact": charact, "sparsity": sparsity}


# ---- in-distribution checks ------------------------------------------------------------------------------
def graph_stats(W: np.ndarray) -> dict[str, np.ndarray]:
    """Histograms of degree (0..10), clustering coefficient (10 bins) and normalised-Laplacian spectrum (20 bins)."""
    A = (W > 0).astype(np.float64) * W
    deg = A.sum(1)
    tri = np.einsum("ij,jk,ki->i", A, A, A)
    clu = np.where(deg > 1, tri / np.maximum(deg * (deg - 1), 1e-12), 0.0)
    dinv = np.where(deg > 0, 1.0 / np.sqrt(np.maximum(deg, 1e-12)), 0.0)
    L = np.eye(len(A)) - dinv[:, None] * A * dinv[None, :]
    L[deg == 0, deg == 0] = 0.0
    ev = np.linalg.eigvalsh(L)
    h_deg = np.bincount(np.clip(np.rint(deg).astype(int), 0, 10), minlength=11).astype(np.float64)
    h_clu = np.histogram(np.clip(clu, 0, 1), bins=10, range=(0, 1))[0].astype(np.float64)
    h_spec = np.histogram(np.clip(ev, 0, 2), bins=20, range=(0, 2))[0].astype(np.float64)
    return {k: v / max(v.sum(), 1) for k, v in {"degree": h_deg, "clustering": h_clu, "spectrum": h_spec}.items()}


def mmd_rbf(P: np.ndarray, Q: np.ndarray, sigma: float | None = None) -> float:
    """Biased MMD² with a Gaussian kernel k(x, y) = exp(−‖x − y‖²/(2σ²)); σ = median pairwise distance if None."""
    P, Q = np.asarray(P, np.float64), np.asarray(Q, np.float64)
    Z = np.concatenate([P, Q])
    D = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    if sigma is None:
        sigma = float(np.sqrt(np.median(D[D > 0]) / 2)) if (D > 0).any() else 1.0
    K = np.exp(-D / (2 * sigma**2))
    n = len(P)
    return float(K[:n, :n].mean() + K[n:, n:].mean() - 2 * K[:n, n:].mean())


def stats_mmd(graphs: list[np.ndarray], reference: list[np.ndarray]) -> dict[str, float]:
    """MMD² (σ = 1 on normalised histograms, as in GraphRNN-style evaluation) per statistic."""
    S = [graph_stats(g) for g in graphs]
    R = [graph_stats(g) for g in reference]
    return {k: mmd_rbf(np.stack([s[k] for s in S]), np.stack([r[k] for r in R]), sigma=1.0) for k in S[0]}

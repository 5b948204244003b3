"""Held-out SAE metrics: reconstruction, sparsity, ground-truth recovery, absorption, probing, proxies.

Every function takes held-out tensors; nothing here sees the replay pool (the memorization gap is measured by
calling ``reconstruction`` on the pool explicitly).
"""

from __future__ import annotations

import numpy as np
import torch

from compute.sae_replay.sae import SAE


def explained_variance(x: torch.Tensor, x_hat: torch.Tensor) -> float:
    """EV = 1 − Σ‖x − x̂‖² / Σ‖x − x̄‖²  (1 for a perfect reconstruction, 0 for predicting the mean)."""
    num = (x - x_hat).double().pow(2).sum()
    den = (x - x.mean(0, keepdim=True)).double().pow(2).sum()
    return float(1.0 - num / den)


@torch.no_grad()
def encode_all(sae: SAE, x: torch.Tensor, batch: int = 4096) -> tuple[torch.Tensor, torch.Tensor]:
    """(x̂, f) for every row of x, in chunks (inference rule: BatchTopK uses its threshold)."""
    xs, fs = [], []
    for i in range(0, x.shape[0], batch):
        xh, f = sae(x[i : i + batch])
        xs.append(xh)
        fs.append(f)
    return torch.cat(xs), torch.cat(fs)


@torch.no_grad()
def reconstruction(sae: SAE, x: torch.Tensor) -> dict[str, float]:
    """EV, nMSE = Σ‖x − x̂‖²/Σ‖x − x̄‖² (= 1 − EV), MSE per row, mean L0, dead fraction (never fires on x)."""
    x_hat, f = encode_all(sae, x)
    ev = explained_variance(x, x_hat)
    fired = (f > 0).any(0)
    return {
        "ev": ev,
        "nmse": 1.0 - ev,
        "mse": float((x - x_hat).pow(2).sum(-1).mean()),
        "l0": float((f > 0).sum(-1).float().mean()),
        "dead": float(1.0 - fired.float().mean()),
    }


def max_cos(features: torch.Tensor, W_dec: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For each true feature (n, d): max cosine with any decoder column of W_dec (d, m), and its argmax latent."""
    fn = features / features.norm(dim=1, keepdim=True)
    wn = W_dec / W_dec.norm(dim=0, keepdim=True).clamp_min(1e-12)
    cos = fn @ wn  # (n, m)
    return cos.max(1)


def mmcs(features: torch.Tensor, W_dec: torch.Tensor, thresh: float = 0.9) -> dict[str, float]:
    """MMCS = mean over true features of max_j cos(f_i, w_j); recovered = fraction with that max > thresh."""
    mc, _ = max_cos(features, W_dec)
    return {"mmcs": float(mc.mean()), "recovered": float((mc > thresh).float().mean())}


def absorption(
    features: torch.Tensor,
    W_dec: torch.Tensor,
    codes: torch.Tensor,
    true_codes: torch.Tensor,
    hierarchies: list,
    tau: float = 0.3,
) -> dict[str, float]:
    """Exact absorption on hierarchical synthetic features.

    For a child c of parent P, let ℓ_P, ℓ_c be the latents whose decoder columns best match f_P, f_c.  A sample
    in which c fires (so P fires through c) is *absorbed* when ℓ_P is silent and cos(w_{ℓ_c}, f_P) > τ (the child
    latent carries the parent direction).  absorption = absorbed / samples with a child firing.  Also reported:
    parent_silent = P(ℓ_P silent | P fires via a child).
    """
    if not hierarchies:
        return {"absorption": float("nan"), "parent_silent": float("nan")}
    _, best = max_cos(features, W_dec)
    wn = W_dec / W_dec.norm(dim=0, keepdim=True).clamp_min(1e-12)
    fn = features / features.norm(dim=1, keepdim=True)
    n_child = absorbed = silent = 0
    for h in hierarchies:
        lp = int(best[h.parent])
        for c in h.children:
            lc = int(best[c])
            mask = true_codes[:, c] > 0
            n = int(mask.sum())
            if n == 0:
                continue
            par_silent = codes[mask, lp] <= 0
            carries = float(fn[h.parent] @ wn[:, lc]) > tau and lc != lp
            n_child += n
            silent += int(par_silent.sum())
            if carries:
                absorbed += int(par_silent.sum())
    if n_child == 0:
        return {"absorption": float("nan"), "parent_silent": float("nan")}
    return {"absorption": absorbed / n_child, "parent_silent": silent / n_child}


def logistic_regression(
    x_tr: torch.Tensor, y_tr: torch.Tensor, x_te: torch.Tensor, n_classes: int, l2: float = 1e-3, iters: int = 100
) -> torch.Tensor:
    """Multinomial logistic regression (L-BFGS, L2 penalty, standardized inputs); returns test predictions."""
    mu, sd = x_tr.mean(0), x_tr.std(0).clamp_min(1e-6)
    a, b = (x_tr - mu) / sd, (x_te - mu) / sd
    W = torch.zeros(a.shape[1], n_classes, dtype=torch.float64, requires_grad=True)
    c = torch.zeros(n_classes, dtype=torch.float64, requires_grad=True)
    a64, y = a.double(), y_tr.long()
    opt = torch.optim.LBFGS([W, c], max_iter=iters, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(a64 @ W + c, y) + l2 * W.pow(2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        return (b.double() @ W + c).argmax(1)


def sparse_probe(
    z_tr: torch.Tensor, y_tr: torch.Tensor, z_te: torch.Tensor, y_te: torch.Tensor, k: int, n_classes: int
) -> float:
    """Sparse probing (SAEBench-style): keep the k latents with the largest class-mean differences, then fit a
    logistic regression on them; returns held-out accuracy (balanced for binary tasks).

    Multi-class: score each latent by the largest |mean_c − mean_rest| over classes.
    """
    scores = torch.zeros(z_tr.shape[1])
    for cl in range(n_classes):
        pos = y_tr == cl
        if pos.any() and (~pos).any():
            scores = torch.maximum(scores, (z_tr[pos].mean(0) - z_tr[~pos].mean(0)).abs())
    idx = torch.topk(scores, min(k, z_tr.shape[1])).indices
    pred = logistic_regression(z_tr[:, idx], y_tr, z_te[:, idx], n_classes)
    if n_classes == 2:
        return balanced_accuracy(pred == 1, y_te == 1)
    return float((pred == y_te).float().mean())


def balanced_accuracy(pred: torch.Tensor, truth: torch.Tensor) -> float:
    """(TPR + TNR)/2 for boolean tensors."""
    pred, truth = pred.bool(), truth.bool()
    tpr = float((pred & truth).sum()) / max(1, int(truth.sum()))
    tnr = float((~pred & ~truth).sum()) / max(1, int((~truth).sum()))
    return 0.5 * (tpr + tnr)


def detection_proxy(
    f_fit: torch.Tensor,
    labels_fit: np.ndarray,
    f_test: torch.Tensor,
    labels_test: np.ndarray,
    n_latents: int = 128,
    top: int = 20,
    seed: int = 0,
) -> float:
    """PROXY for auto-interpretability detection (an LLM explainer is unavailable offline).

    For a latent, the "explanation" is the modal label (token id, or true feature) among its ``top`` highest-
    activating fit contexts; the score is the balanced accuracy of predicting "latent fires" from "context has that
    label" on held-out contexts.  Averaged over up to ``n_latents`` latents alive on both splits.
    ``labels_*`` are int arrays (one label per row) or boolean matrices (rows × labels, any may hold).
    """
    alive = ((f_fit > 0).sum(0) >= top) & ((f_test > 0).any(0))
    cand = torch.nonzero(alive).flatten().numpy()
    if cand.size == 0:
        return float("nan")
    rng = np.random.default_rng(seed)
    cand = rng.choice(cand, size=min(n_latents, cand.size), replace=False)
    scores = []
    for j in cand:
        top_rows = torch.topk(f_fit[:, j], top).indices.numpy()
        if labels_fit.ndim == 1:
            vals, counts = np.unique(labels_fit[top_rows], return_counts=True)
            lab = vals[counts.argmax()]
            has = labels_test == lab
        else:
            lab = labels_fit[top_rows].sum(0).argmax()
            has = labels_test[:, lab]
        scores.append(balanced_accuracy(torch.from_numpy(np.asarray(has)), f_test[:, j] > 0))
    return float(np.mean(scores))

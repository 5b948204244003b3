"""Calibration activations, per-layer / per-neuron threshold calibration to a target recall, mask metrics.

Threshold rule (design choice, spec §2 "Threshold calibration"): over calibration tokens, with A = {(t, i): g_i > 0}
the truly active entries,

    per layer:   τ_l = the (1−ρ)-quantile of {ĝ_i(x_t) : (t, i) ∈ A}      ⇒ calibration recall ≥ ρ (granularity 1/|A|)
    per neuron:  τ_{l,i} = the same quantile over the tokens where neuron i is active (layer τ if it never is)
    weighted:    w_{t,i} = |h_{t,i}|·‖W_d[:, i]‖ (CETT-like); τ is the largest value whose missed weight
                 Σ_{ĝ ≤ τ} w ≤ (1 − ρ) Σ w

Predicted set P = {i : ĝ_i > τ}; the sign of ĝ decides (spec §6 "Threshold sign").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from compute.core.lm.model import TinyLM
from compute.svd_sparsity.build import GateTap, eval_windows, gate_up


@dataclass
class LayerData:
    """FFN inputs of one layer on some tokens (x after the block's RMSNorm)."""

    X: torch.Tensor  # [n, d] float32
    W_g: torch.Tensor  # [d_ff, d]
    W_u: torch.Tensor  # [d_ff, d]
    W_d: torch.Tensor  # [d, d_ff]

    def gate(self, chunk: int = 8192) -> torch.Tensor:
        """True gate pre-activations g = W_g x for every token ([n, d_ff])."""
        return torch.cat([self.X[i : i + chunk] @ self.W_g.T for i in range(0, len(self.X), chunk)])


@torch.no_grad()
def collect_inputs(model: TinyLM, stream: torch.Tensor, n_tokens: int, context: int) -> list[LayerData]:
    """Run the model on the first ~n_tokens of a stream (windows of ``context``) and keep each FFN input."""
    tokens = eval_windows(stream, n_tokens, context)
    tap = GateTap(model, keep_inputs=True)
    xs: list[list[torch.Tensor]] = [[] for _ in model.blocks]
    try:
        for i in range(0, len(tokens), 8):
            model(tokens[i : i + 8])
            for l_, x in enumerate(tap.x):
                xs[l_].append(x.reshape(-1, x.shape[-1]).clone())
    finally:
        tap.remove()
    out = []
    for l_ in range(len(model.blocks)):
        W_g, W_u, W_d = gate_up(model, l_)
        out.append(LayerData(torch.cat(xs[l_]), W_g.detach(), W_u.detach(), W_d.detach()))
    return out


def _quantile_threshold(values: np.ndarray, rho: float) -> float:
    """τ with #(values > τ) ≥ ρ·m: the k-th smallest value, k = ⌊(1−ρ)m⌋ (k = 0 → just below the minimum)."""
    m = values.size
    if m == 0:
        return float("inf")
    k = int(np.floor((1.0 - rho) * m + 1e-9))
    if k <= 0:
        return float(np.nextafter(values.min(), -np.inf))
    return float(np.partition(values, k - 1)[k - 1])


def _weighted_threshold(values: np.ndarray, weights: np.ndarray, rho: float) -> float:
    """Largest τ among the values with Σ_{v ≤ τ} w ≤ (1 − ρ) Σ w."""
    if values.size == 0:
        return float("inf")
    order = np.argsort(values, kind="stable")
    cw = np.cumsum(weights[order])
    ok = np.nonzero(cw <= (1.0 - rho) * cw[-1])[0]
    if ok.size == 0:
        return float(np.nextafter(values.min(), -np.inf))
    return float(values[order[ok[-1]]])


def calibrate_thresholds(
    g_hat: torch.Tensor,
    g: torch.Tensor,
    rho: float,
    granularity: str = "layer",
    weights: torch.Tensor | None = None,
) -> torch.Tensor:
    """Thresholds for the predictor scores ``g_hat`` [n, d_ff] given true gates ``g`` [n, d_ff].

    Returns a 0-d tensor (per layer) or a [d_ff] tensor (per neuron).  ``weights`` [n, d_ff] switches to the
    magnitude-weighted recall (missed weight fraction ≤ 1 − ρ).
    """
    active = g > 0
    if granularity == "layer":
        v = g_hat[active].double().numpy()
        if weights is None:
            return torch.tensor(_quantile_threshold(v, rho))
        return torch.tensor(_weighted_threshold(v, weights[active].double().numpy(), rho))
    if granularity != "neuron":
        raise ValueError("granularity must be 'layer' or 'neuron'")
    layer_tau = calibrate_thresholds(g_hat, g, rho, "layer", weights)
    taus = torch.full((g.shape[1],), float(layer_tau), dtype=torch.float64)
    gh, act = g_hat.T.double().numpy(), active.T.numpy()
    w = weights.T.double().numpy() if weights is not None else None
    for i in range(g.shape[1]):
        vi = gh[i][act[i]]
        if vi.size == 0:
            continue
        taus[i] = _quantile_threshold(vi, rho) if w is None else _weighted_threshold(vi, w[i][act[i]], rho)
    return taus


def cett_weights(g: torch.Tensor, u: torch.Tensor, W_d: torch.Tensor) -> torch.Tensor:
    """w_{t,i} = |h_{t,i}|·‖W_d[:, i]‖₂ with h = ReLU(g) ⊙ u (each neuron's contribution to the output norm)."""
    return (torch.relu(g) * u).abs() * W_d.norm(dim=0)


def mask_metrics(pred: torch.Tensor, g: torch.Tensor) -> dict[str, float]:
    """recall |P∩A|/|A|, precision |P∩A|/|P|, density |P|/d_ff, natural sparsity 1 − |A|/d_ff (means over tokens)."""
    active = g > 0
    tp = float((pred & active).sum())
    n_a, n_p = float(active.sum()), float(pred.sum())
    return {
        "recall": tp / n_a if n_a else 1.0,
        "precision": tp / n_p if n_p else 1.0,
        "density": n_p / pred.numel(),
        "natural_sparsity": 1.0 - n_a / active.numel(),
    }


def predict_scores(X: torch.Tensor, A: torch.Tensor, B: torch.Tensor, chunk: int = 8192) -> torch.Tensor:
    """ĝ = A(Bx) for every row of X ([n, d_ff])."""
    return torch.cat([(X[i : i + chunk] @ B.T) @ A.T for i in range(0, len(X), chunk)])

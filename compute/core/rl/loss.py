"""The clipped policy-gradient loss with per-token weights and masks, and the k3 KL (spec grpo_core §2, step 5).

Per token, with ρ = exp(clamp(logp − old_logp, −20, 20)) (as verl's ``compute_policy_loss_vanilla``):

    ℓ = max(−A·ρ, −A·clip(ρ, 1 − ε_l, 1 + ε_h))          (PPO surrogate, clip-higher when ε_h > ε_l)
    ℓ ← min(ℓ, −A·c)   where A < 0                         (dual clip, Ye et al. 2020)

Aggregation of ω·ℓ over the response mask m (``loss_agg``):

* ``token-mean``          Σ ω ℓ m / Σ m over the whole mini-batch (masked tokens leave numerator *and*
                          denominator; ω never enters the denominator)
* ``seq-mean-token-mean`` mean over sequences of Σ_t ω ℓ m / Σ_t m
* ``constant``            Σ ω ℓ m / (N_seq · L_max)   (Dr. GRPO)
"""

from __future__ import annotations

import torch

LOSS_AGGS = ("token-mean", "seq-mean-token-mean", "constant")


def aggregate(
    values: torch.Tensor,
    mask: torch.Tensor,
    agg: str = "token-mean",
    max_len: int | None = None,
    denom: float | torch.Tensor | None = None,
    n_seq: int | None = None,
) -> torch.Tensor:
    """Aggregate per-token values [B, T] under a {0,1} mask.

    ``denom`` overrides Σ m for ``token-mean`` (micro-batches of one mini-batch divide by the mini-batch's
    total); ``n_seq`` overrides the sequence count for the other modes likewise.
    """
    mask = mask.to(values.dtype)
    if agg == "token-mean":
        d = mask.sum() if denom is None else denom
        return (values * mask).sum() / (d if torch.is_tensor(d) else torch.tensor(float(d))).clamp(min=1.0)
    if agg == "seq-mean-token-mean":
        per_seq = (values * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)
        n = (mask.sum(-1) > 0).sum() if n_seq is None else n_seq
        return per_seq.sum() / max(float(n), 1.0)
    if agg == "constant":
        L = max_len if max_len is not None else values.shape[-1]
        n = values.shape[0] if n_seq is None else n_seq
        return (values * mask).sum() / float(n * L)
    raise ValueError(f"loss_agg must be one of {LOSS_AGGS}, got {agg!r}")


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    adv: torch.Tensor,
    mask: torch.Tensor,
    weights: torch.Tensor | None = None,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
    dual_clip: float = 10.0,
    loss_agg: str = "token-mean",
    max_len: int | None = None,
    denom: float | torch.Tensor | None = None,
    n_seq: int | None = None,
) -> tuple[torch.Tensor, dict[str, float], torch.Tensor]:
    """(loss, stats, per-token ℓ) for logp, old_logp, adv, mask, weights of shape [B, T].

    ``adv`` may be per sequence [B] (broadcast over tokens).  ``stats``: clip fractions (upper: A > 0 and
    ρ > 1 + ε_h; lower: A < 0 and ρ < 1 − ε_l; dual: the dual clip is active), all over masked tokens.
    """
    if adv.dim() == 1:
        adv = adv[:, None].expand_as(logp)
    ratio = torch.exp(torch.clamp(logp - old_logp, -20.0, 20.0))
    pg1 = -adv * ratio
    pg2 = -adv * torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    clipped = torch.maximum(pg1, pg2)
    pg3 = -adv * dual_clip
    dual = torch.minimum(clipped, pg3)
    per_tok = torch.where(adv < 0, dual, clipped)
    w = per_tok if weights is None else per_tok * weights
    loss = aggregate(w, mask, loss_agg, max_len, denom, n_seq)
    m = mask.bool()
    nm = max(1, int(m.sum()))
    with torch.no_grad():
        stats = {
            "clip/upper": float(((ratio > 1 + eps_high) & (adv > 0) & m).sum()) / nm,
            "clip/lower": float(((ratio < 1 - eps_low) & (adv < 0) & m).sum()) / nm,
            "clip/dual": float(((clipped > pg3) & (adv < 0) & m).sum()) / nm,
        }
    return loss, stats, per_tok


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(π ‖ π_ref) per token: e^{ref − logp} − (ref − logp) − 1 (≥ 0)."""
    d = torch.clamp(ref_logp - logp, -20.0, 20.0)
    return torch.exp(d) - d - 1.0

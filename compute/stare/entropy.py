"""First-order entropy analysis of a softmax policy under a policy-gradient step (spec stare §2 "Entropy analysis").

For logits z, π = softmax(z), H = −Σ π_k log π_k, a sampled token a with surprisal s_a = −log π_a and advantage A,
one ascent step on A·log π_a in logit space is Δz = ηA(e_a − π).  With ∂H/∂z_j = −π_j(log π_j + H):

    ΔH ≈ η·A·S(a; π),   S(a; π) = π_a(s_a − H) + Σ_k π_k²(log π_k + H)

and E_{a∼π}[S] = 0 exactly, so the batch entropy drift is the covariance of A and S.  sign(ΔH) ≈ sign(A)·sign(s_a − H)
gives the four advantage × surprisal quadrants.
"""

from __future__ import annotations

import torch

QUADRANTS = ("pos_high", "pos_low", "neg_high", "neg_low")  # (A > 0 | A < 0) × (s_a > H | s_a ≤ H)


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """H = −Σ π log π over the last axis."""
    lp = torch.log_softmax(logits, dim=-1)
    return -(lp.exp() * lp).sum(-1)


def entropy_sensitivity(logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """S(a; π) = π_a(s_a − H) + Σ_k π_k²(log π_k + H) for logits [..., V] and actions [...] (long)."""
    lp = torch.log_softmax(logits, dim=-1)
    p = lp.exp()
    h = -(p * lp).sum(-1)
    lp_a = lp.gather(-1, actions[..., None]).squeeze(-1)
    return lp_a.exp() * (-lp_a - h) + (p * p * (lp + h[..., None])).sum(-1)


def entropy_logit_gradient(logits: torch.Tensor) -> torch.Tensor:
    """∂H/∂z_j = −π_j(log π_j + H), shape of ``logits``."""
    lp = torch.log_softmax(logits, dim=-1)
    p = lp.exp()
    h = -(p * lp).sum(-1, keepdim=True)
    return -p * (lp + h)


def quadrant_index(adv: torch.Tensor, surprisal: torch.Tensor, entropy: torch.Tensor) -> torch.Tensor:
    """0 pos_high, 1 pos_low, 2 neg_high, 3 neg_low; −1 where A = 0 (same shape as the inputs)."""
    high = surprisal > entropy
    q = torch.where(adv > 0, torch.where(high, 0, 1), torch.where(high, 2, 3))
    return torch.where(adv == 0, torch.full_like(q, -1), q)

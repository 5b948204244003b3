"""Token masks of STAPO and its baselines, and the paper's gradient-norm / entropy theory (spec stapo §2).

S2T mask (paper §3, "Silencing Spurious Tokens"), per token of a mini-batch::

    C       = {(i, t) : Â_i > 0 ∧ π_θ(y_{i,t}) < τ_p}                 (rare tokens in correct answers)
    τ_h     = quantile_q {H_{i,t} : (i, t) ∈ C}                         (q = 0.75; C empty ⇒ nothing masked)
    I_{i,t} = 0  iff (i, t) ∈ C ∧ H_{i,t} < τ_h,   else 1

Gradient of −log softmax(z)_y w.r.t. the logits z, scaled by a coefficient w (paper §2, Lemma 1)::

    ‖∇_z‖² = w² (1 − 2π(y) + Σ_k π_k²)
    w² (1 − 2p + e^{−H})  ≤  ‖∇_z‖²  ≤  w² (2 − 2p − C_V H²),   C_V = (V − 1) / (V (log V)²)

Entropy lemma (softmax, one expected policy-gradient step of size η on the logits)::

    ΔH ≈ −η Σ_y π(y)² (log π(y) + H) (A(y) − E_π A)
"""

from __future__ import annotations

import math

import torch


def s2t_mask(
    logp: torch.Tensor,
    entropy: torch.Tensor,
    adv: torch.Tensor,
    valid: torch.Tensor,
    tau_p: float = 0.01,
    q: float = 0.75,
    invert: bool = False,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Keep-mask I [B, T] (bool; False = silenced) and stats {candidates, tau_h, silenced}.

    ``adv`` per token [B, T] (or per sequence [B]); ``valid`` the response mask.  ``invert`` is the
    inverted-entropy ablation: among the candidates, silence the *high*-entropy share q (H > quantile_{1−q}).
    """
    if adv.dim() == 1:
        adv = adv[:, None].expand_as(logp)
    lp, ent = logp.detach(), entropy.detach()
    cand = (adv > 0) & (lp.exp() < tau_p) & valid.bool()
    keep = torch.ones_like(cand)
    n = int(cand.sum())
    if n == 0:
        return keep, {"candidates": 0.0, "tau_h": float("nan"), "silenced": 0.0}
    if invert:
        tau_h = float(torch.quantile(ent[cand].double(), 1.0 - q))
        silence = cand & (ent > tau_h)
    else:
        tau_h = float(torch.quantile(ent[cand].double(), q))
        silence = cand & (ent < tau_h)
    keep = ~silence
    return keep, {"candidates": float(n), "tau_h": tau_h, "silenced": float(silence.sum())}


def top_entropy_mask(entropy: torch.Tensor, valid: torch.Tensor, top: float = 0.2) -> torch.Tensor:
    """20-Entropy baseline (Wang et al. 2025): keep tokens with H ≥ the (1 − top) quantile of the mini-batch."""
    v = valid.bool()
    if not v.any():
        return torch.ones_like(v)
    thr = torch.quantile(entropy.detach()[v].double(), 1.0 - top)
    return (entropy.detach().double() >= thr) & v | ~v


def random_mask(valid: torch.Tensor, n_silence: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Random-mask ablation: silence ``n_silence`` valid tokens drawn uniformly without replacement."""
    keep = torch.ones_like(valid, dtype=torch.bool)
    idx = valid.bool().flatten().nonzero(as_tuple=True)[0]
    n = min(int(n_silence), len(idx))
    if n > 0:
        pick = idx[torch.randperm(len(idx), generator=generator, device=idx.device)[:n]]
        keep.view(-1)[pick] = False
    return keep


def logit_grad_sq(probs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """‖∂(−log softmax(z)_y)/∂z‖² = 1 − 2π(y) + Σ_k π_k², from probabilities [..., V] and targets [...]."""
    p_y = probs.gather(-1, y[..., None]).squeeze(-1)
    return 1.0 - 2.0 * p_y + (probs * probs).sum(-1)


def grad_sq_bounds(p: torch.Tensor, H: torch.Tensor, V: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Lower 1 − 2p + e^{−H} and upper 2 − 2p − C_V H² bounds on ‖∇_z‖²/w² (C_V = (V−1)/(V (log V)²))."""
    c_v = (V - 1) / (V * math.log(V) ** 2)
    return 1.0 - 2.0 * p + torch.exp(-H), 2.0 - 2.0 * p - c_v * H * H


def entropy_change_first_order(logits: torch.Tensor, A: torch.Tensor, eta: float) -> torch.Tensor:
    """Lemma: ΔH ≈ −η Σ_y π(y)² (log π(y) + H)(A(y) − E_π A) for one softmax (logits [V], per-action A [V])."""
    logp = torch.log_softmax(logits, -1)
    pi = logp.exp()
    H = -(pi * logp).sum()
    return -eta * (pi * pi * (logp + H) * (A - (pi * A).sum())).sum()

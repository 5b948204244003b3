"""STARE's token weights and target-entropy gate, and the Clip-Cov / KL-Cov baselines, as core plug-ins.

Spec stare §2 (after ``compute_stare_token_weights`` / ``compute_policy_loss_stare`` of hp-luo/STARE):

* T+ = valid ∧ Â > 0, T− = valid ∧ Â < 0; surprisal s = −log π_θ(o_t) (detached);
* L+ = the top max(1, ⌈P·|T+|⌉) tokens of T+ by s; L− likewise on T− (variant C2 only);
* ω = W on L+, ω = M on L− (C2), 1 elsewhere; the core's loss is (1/Σ mask)·Σ ω·ℓ (ω never in the denominator);
* gate: H̄ = token-mean entropy of π_old over the valid response tokens; reweighting active iff H̄ < H_tgt
  (gate off ⇒ ω ≡ 1 ⇒ exactly GRPO-ds);
* optional adaptive schedule: W ← clip(W + α·sgn(H_tgt − H̄), 1, w_max), M ← clip(M − α·sgn(H_tgt − H̄), m_min, 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from compute.core.rl.plugins import LossContext, Plugin, TokenWeights


def select_top_surprisal(surprisal: torch.Tensor, cand: torch.Tensor, frac: float) -> torch.Tensor:
    """Boolean mask of the top max(1, ⌈frac·|cand|⌉) candidates by surprisal (empty when there are none)."""
    cand = cand.bool()
    n = int(cand.sum())
    out = torch.zeros_like(cand)
    if n == 0:
        return out
    k = min(n, max(1, math.ceil(frac * n - 1e-9)))
    vals = torch.where(cand, surprisal.float(), torch.full_like(surprisal.float(), -math.inf)).flatten()
    idx = torch.topk(vals, k).indices
    out.view(-1)[idx] = True
    return out


def stare_weights(
    surprisal: torch.Tensor,
    adv: torch.Tensor,
    mask: torch.Tensor,
    frac: float,
    w_pos: float,
    m_neg: float,
    variant: str = "O1",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(ω, L+, L−) for [B, T] tensors: ω = W on L+, M on L− (C2 only; L− empty under O1), 1 elsewhere."""
    valid = mask.bool()
    l_pos = select_top_surprisal(surprisal, valid & (adv > 0), frac)
    l_neg = select_top_surprisal(surprisal, valid & (adv < 0), frac) if variant == "C2" else torch.zeros_like(l_pos)
    w = torch.ones_like(adv, dtype=torch.float32)
    w = torch.where(l_pos, torch.full_like(w, w_pos), w)
    w = torch.where(l_neg, torch.full_like(w, m_neg), w)
    return w, l_pos, l_neg


@dataclass
class StareSettings:
    """STARE knobs (spec stare §2 "Defaults"; 7B values P 0.1, W 1.1, M 0.9, α 0.01, w_max 1.5, m_min 0.5)."""

    variant: str = "O1"  # O1: amplify L+ only; C2: also damp L−
    frac: float = 0.1  # P
    w_pos: float = 1.1  # W
    m_neg: float = 0.9  # M
    target_entropy: float = 0.0  # H_tgt in nats; 0 ⇒ κ · H̄ of the first step's batch (the SFT policy)
    kappa: float = 0.5
    gated: bool = True  # False: reweight on every step
    adaptive: bool = False
    alpha: float = 0.01
    w_max: float = 1.5
    m_min: float = 0.5
    active: bool = True  # False: monitor only (ω ≡ 1; gate state and band still reported) — for the baselines


def gate_update(h_bar: float, h_tgt: float) -> bool:
    """gate_on = [H̄ < H_tgt]."""
    return h_bar < h_tgt


def adaptive_update(w: float, m: float, h_bar: float, h_tgt: float, s: StareSettings) -> tuple[float, float]:
    """W ← clip(W + α·sgn(H_tgt − H̄), 1, w_max); M ← clip(M − α·sgn(H_tgt − H̄), m_min, 1)."""
    d = (h_tgt > h_bar) - (h_tgt < h_bar)
    return min(max(w + s.alpha * d, 1.0), s.w_max), min(max(m - s.alpha * d, s.m_min), 1.0)


def batch_entropy(entropy: torch.Tensor, mask: torch.Tensor) -> float:
    """Token-mean entropy over the valid response tokens."""
    m = mask.float()
    return float((entropy * m).sum() / m.sum().clamp(min=1.0))


class StarePlugin(Plugin):
    """STARE-O1 / STARE-C2 (or, with ``active=False``, a monitor that reports H̄, H_tgt and the gate state)."""

    name = "stare"

    def __init__(self, settings: StareSettings | None = None) -> None:
        self.s = settings or StareSettings()
        self.w = self.s.w_pos
        self.m = self.s.m_neg
        self.h_tgt = self.s.target_entropy if self.s.target_entropy > 0 else None
        self.gate_on = False
        self.h_bar = float("nan")
        self._step = -1

    def _controller(self, ctx: LossContext) -> None:
        """Pre-loss controller, once per step: H̄ of π_old on this batch, H_tgt (first step if automatic), gate."""
        if self._step == ctx.step:
            return
        self._step = ctx.step
        old_ent = ctx.batch.old_entropy if ctx.batch is not None else ctx.entropy.detach()
        self.h_bar = batch_entropy(old_ent, ctx.mask)
        if self.h_tgt is None:
            self.h_tgt = self.s.kappa * self.h_bar
        self.gate_on = gate_update(self.h_bar, self.h_tgt) if self.s.gated else True

    def token_weights(self, ctx: LossContext) -> TokenWeights | None:
        self._controller(ctx)
        on = self.s.active and self.gate_on
        stats = {"stare/gate": float(on), "stare/H_bar": self.h_bar, "stare/H_tgt": float(self.h_tgt or 0.0)}
        if not on:
            return TokenWeights(stats={**stats, "stare/L_pos": 0.0, "stare/L_neg": 0.0, "stare/mean_w": 1.0})
        w, lp, ln = stare_weights(ctx.surprisal, ctx.adv, ctx.mask, self.s.frac, self.w, self.m, self.s.variant)
        m = ctx.mask.bool()
        stats.update(
            {
                "stare/L_pos": float(lp.sum()),
                "stare/L_neg": float(ln.sum()),
                "stare/mean_w": float(w[m].mean()) if m.any() else 1.0,
            }
        )
        return TokenWeights(weight=w, stats=stats)

    def on_step_end(self, stats: dict[str, float], state: object) -> dict[str, float]:
        out = {
            "stare/gate": float(self.s.active and self.gate_on),
            "stare/W": self.w,
            "stare/M": self.m,
        }
        if self.h_tgt is not None:
            out.update({"band/H_tgt": self.h_tgt, "band/lo": 0.8 * self.h_tgt, "band/hi": 1.2 * self.h_tgt})
        if self.s.active and self.s.adaptive and self.h_tgt is not None and math.isfinite(self.h_bar):
            self.w, self.m = adaptive_update(self.w, self.m, self.h_bar, self.h_tgt, self.s)
        return out


def token_covariance(adv: torch.Tensor, logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Cui et al. (2025) per-token Cov = (A − Ā)(log π − mean log π), means over the valid tokens; 0 off-mask."""
    m = mask.bool()
    n = m.sum().clamp(min=1)
    a_bar = (adv * m).sum() / n
    l_bar = (logp * m).sum() / n
    return torch.where(m, (adv - a_bar) * (logp - l_bar), torch.zeros_like(adv))


class ClipCovPlugin(Plugin):
    """Clip-Cov: ω = 0 (gradient detached, denominator kept) on a random ``ratio`` share of the valid tokens whose
    Cov lies in (lo, hi); at least one token when any qualifies."""

    name = "clip_cov"

    def __init__(self, ratio: float = 2e-4, lo: float = 1.0, hi: float = 5.0, seed: int = 0) -> None:
        self.ratio, self.lo, self.hi = ratio, lo, hi
        self.gen = torch.Generator().manual_seed(seed)

    def token_weights(self, ctx: LossContext) -> TokenWeights | None:
        cov = token_covariance(ctx.adv, ctx.logp.detach(), ctx.mask)
        cand = ctx.mask.bool() & (cov > self.lo) & (cov < self.hi)
        n_valid = int(ctx.mask.sum())
        idx = cand.flatten().nonzero(as_tuple=True)[0]
        k = min(len(idx), max(1, int(self.ratio * n_valid))) if len(idx) else 0
        w = torch.ones_like(ctx.adv, dtype=torch.float32)
        if k:
            pick = idx[torch.randperm(len(idx), generator=self.gen)[:k]]
            w.view(-1)[pick] = 0.0
        return TokenWeights(weight=w, stats={"cov/clipped": float(k)})


class KLCovPlugin(Plugin):
    """KL-Cov: adds coef·|log π − log π_old| on the top ``ratio`` share of valid tokens by Cov (token-mean over the
    mini-batch's Σ mask).  Note: with one on-policy update per batch log π = log π_old, so |·| has zero gradient
    (torch's abs′(0) = 0); it acts only with several mini-batches / epochs."""

    name = "kl_cov"

    def __init__(self, ratio: float = 2e-4, coef: float = 1.0) -> None:
        self.ratio, self.coef = ratio, coef

    def extra_loss(self, ctx: LossContext) -> torch.Tensor | None:
        cov = token_covariance(ctx.adv, ctx.logp.detach(), ctx.mask)
        n_valid = int(ctx.mask.sum())
        if n_valid == 0:
            return None
        k = max(1, int(self.ratio * n_valid))
        vals = torch.where(ctx.mask.bool(), cov, torch.full_like(cov, -math.inf)).flatten()
        sel = torch.zeros(vals.numel(), dtype=torch.bool)
        sel[torch.topk(vals, k).indices] = True
        sel = sel.view_as(cov)
        kl = (ctx.logp - ctx.old_logp).abs()
        return self.coef * (kl * sel).sum() / ctx.mask.sum().clamp(min=1.0)

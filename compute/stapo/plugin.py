"""The STAPO plug-in (S2T mask) and its baselines/ablations as token masks on the GRPO core (spec stapo §2).

Arms (the base objective of all but ``grpo`` is JustRL/DAPO: token-mean, clip [0.8, 1.28], no KL; set by
``compute.stapo.config``):

* ``grpo`` / ``justrl``: no mask (the S2T detector still runs as a diagnostic, for precision/recall);
* ``stapo``: I = S2T mask, passed as the core's *mask*, so silenced tokens leave numerator and denominator:
  J = (1/Σ I) Σ I·min(ρÂ, clip(ρ)Â);
* ``entropy20``: gradients only through tokens with H ≥ the mini-batch's 0.8 entropy quantile;
* ``random_mask``: as many random valid tokens as S2T would silence;
* ``inverted_entropy``: silence the high-entropy share q of the candidates instead;
* ``no_renorm``: the S2T mask as a weight ω = I (the core never puts ω in the denominator), so silenced tokens
  stay in Σ mask: the loss is exactly Σ I / Σ mask times the STAPO loss.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from compute.core.lm.model import positions_from_valid
from compute.core.rl.plugins import LossContext, Plugin, TokenWeights
from compute.stapo.labels import token_labels
from compute.stapo.mask import logit_grad_sq, random_mask, s2t_mask, top_entropy_mask

ARMS = ("grpo", "justrl", "entropy20", "stapo", "random_mask", "inverted_entropy", "no_renorm")
TYPES = ("digit", "operator", "structural")


def token_type(symbol: str) -> str:
    if symbol.isdigit():
        return "digit"
    if symbol in "+-*/=":
        return "operator"
    return "structural"


def response_probs(model: Any, batch: Any, temperature: float = 1.0) -> torch.Tensor:
    """softmax(z/T) at every response position [B, R, V] (the forward of ``logp_entropy``), no grad."""
    P, R = batch.prompt.shape[1], batch.response.shape[1]
    inp = torch.cat([batch.prompt, batch.response[:, :-1]], dim=1)
    valid = torch.cat(
        [batch.prompt_mask.bool(), torch.ones(len(batch), R - 1, dtype=torch.bool, device=inp.device)], dim=1
    )
    with torch.no_grad():
        z = model(inp, positions_from_valid(valid), valid)[:, P - 1 :].float()
    return torch.softmax(z / (temperature if temperature > 0 else 1.0), -1)


class StapoPlugin(Plugin):
    """S2T mask (or a baseline mask) in ``token_weights``; detector quality and gradient shares in ``on_step_end``.

    Per step it reports ``s2t/mask_rate`` (silenced / valid tokens, of the arm's own mask), ``s2t/detect_rate``
    (what the S2T detector flags, every arm), ``s2t/gt_rate`` (ground-truth spurious / known tokens in Â > 0
    responses), ``s2t/precision``, ``s2t/recall``, ``s2t/enrichment`` = precision / base rate, masked-token
    types, and every ``grad_every`` steps ``s2t/grad_share`` = Σ_detected ‖∇_z‖² / Σ_all ‖∇_z‖² with
    ‖∇_z‖² = (Âρ)² (1 − 2p + Σπ²).
    """

    name = "stapo"

    def __init__(
        self,
        arm: str = "stapo",
        tau_p: float = 0.01,
        q: float = 0.75,
        top: float = 0.2,
        grad_every: int = 5,
        seed: int = 0,
    ) -> None:
        if arm not in ARMS:
            raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
        self.arm, self.tau_p, self.q, self.top, self.grad_every = arm, tau_p, q, top, grad_every
        self.gen = torch.Generator().manual_seed(seed + 991)
        self.acc: dict[str, float] = {}
        # whole-run counts (pooled precision/recall: Σ det∧spurious / Σ det∧known, Σ det∧spurious / Σ spurious)
        self.totals = {"silenced": 0.0, "valid": 0.0, "det_known": 0.0, "det_spurious": 0.0, "spurious": 0.0}
        self.sample: dict[str, np.ndarray] | None = None

    # ---- the mask -------------------------------------------------------------------------
    def masks(self, ctx: LossContext) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
        """(keep mask of this arm [B, T] bool, S2T detection [B, T] bool, S2T stats)."""
        valid = ctx.mask.bool()
        inv = self.arm == "inverted_entropy"
        keep_s2t, st = s2t_mask(ctx.logp, ctx.entropy, ctx.adv, valid, self.tau_p, self.q, invert=inv)
        detected = ~keep_s2t & valid
        if self.arm in ("stapo", "no_renorm", "inverted_entropy"):
            keep = keep_s2t
        elif self.arm == "entropy20":
            keep = top_entropy_mask(ctx.entropy, valid, self.top)
        elif self.arm == "random_mask":
            keep = random_mask(valid.cpu(), int(detected.sum()), self.gen).to(valid.device)
        else:
            keep = torch.ones_like(valid)
        if inv:  # the detector diagnostic is always the paper's S2T set
            keep_d, _ = s2t_mask(ctx.logp, ctx.entropy, ctx.adv, valid, self.tau_p, self.q)
            detected = ~keep_d & valid
        return keep, detected, st

    def token_weights(self, ctx: LossContext) -> TokenWeights:
        keep, detected, st = self.masks(ctx)
        valid = ctx.mask.bool()
        silenced = valid & ~keep
        if ctx.logp is not ctx.old_logp:  # skip the trainer's token-record pass (it reuses old_logp as logp)
            self._accumulate(ctx, keep, detected, silenced)
        stats = {"tau_h": st["tau_h"], "candidates": st["candidates"]}
        if self.arm == "no_renorm":
            return TokenWeights(weight=keep.float(), mask=None, stats=stats)
        if self.arm in ("grpo", "justrl"):
            return TokenWeights(stats=stats)
        return TokenWeights(mask=keep, stats=stats)

    # ---- diagnostics ----------------------------------------------------------------------
    def _add(self, key: str, v: float) -> None:
        self.acc[key] = self.acc.get(key, 0.0) + float(v)

    def _accumulate(self, ctx: LossContext, keep: torch.Tensor, detected: torch.Tensor, silenced: torch.Tensor) -> None:
        valid = ctx.mask.bool()
        adv = ctx.adv if ctx.adv.dim() == 2 else ctx.adv[:, None].expand_as(ctx.logp)
        pos = valid & (adv > 0)
        self._add("valid", valid.sum())
        self._add("silenced", silenced.sum())
        self._add("detected", detected.sum())
        self._add("candidates", (pos & (ctx.logp.detach().exp() < self.tau_p)).sum())
        self.totals["silenced"] += float(silenced.sum())
        self.totals["valid"] += float(valid.sum())
        batch, state = ctx.batch, ctx.state
        if batch is not None and state is not None and hasattr(batch, "problems"):
            lab = torch.as_tensor(token_labels(batch, state.task.tokenizer), device=valid.device)
            known = pos & (lab >= 0)
            spur = pos & (lab == 1)
            self._add("known_pos", known.sum())
            self._add("spurious", spur.sum())
            self._add("det_known", (detected & known).sum())
            self._add("det_spurious", (detected & spur).sum())
            self.totals["det_known"] += float((detected & known).sum())
            self.totals["det_spurious"] += float((detected & spur).sum())
            self.totals["spurious"] += float(spur.sum())
            syms = state.task.tokenizer.symbols
            resp = batch.response
            for i, j in silenced.nonzero().tolist():
                self._add(f"type_{token_type(syms[int(resp[i, j])])}", 1)
            if self.grad_every and state.step % self.grad_every == 0:
                probs = response_probs(state.model, batch, state.cfg.temperature)
                g2 = (adv * ctx.ratio) ** 2 * logit_grad_sq(probs, batch.response)
                g2 = g2 * valid
                self._add("g2_all", g2.sum())
                self._add("g2_det", g2[detected].sum())
                self._add("g2_pos", g2[pos].sum())
                self._add("n_pos", pos.sum())
                p, H = ctx.logp.detach().exp(), ctx.entropy.detach()
                sel = pos.nonzero()[:1500]
                self.sample = {
                    "p": p[sel[:, 0], sel[:, 1]].cpu().numpy(),
                    "H": H[sel[:, 0], sel[:, 1]].cpu().numpy(),
                    "g2": (1.0 - 2 * p + (probs * probs).sum(-1))[sel[:, 0], sel[:, 1]].cpu().numpy(),
                    "masked": detected[sel[:, 0], sel[:, 1]].cpu().numpy(),
                    "spurious": spur[sel[:, 0], sel[:, 1]].cpu().numpy(),
                }

    def on_step_end(self, stats: dict[str, float], state: Any) -> dict[str, float]:
        a, self.acc = self.acc, {}
        nan = float("nan")
        v = max(1.0, a.get("valid", 0.0))
        out = {
            "s2t/mask_rate": a.get("silenced", 0.0) / v,
            "s2t/detect_rate": a.get("detected", 0.0) / v,
            "s2t/candidate_rate": a.get("candidates", 0.0) / v,
            "s2t/cum_mask_rate": self.totals["silenced"] / max(1.0, self.totals["valid"]),
        }
        if "known_pos" in a:
            base = a["spurious"] / a["known_pos"] if a["known_pos"] else nan
            prec = a["det_spurious"] / a["det_known"] if a["det_known"] else nan
            out["s2t/gt_rate"] = base
            out["s2t/precision"] = prec
            out["s2t/recall"] = a["det_spurious"] / a["spurious"] if a["spurious"] else nan
            out["s2t/enrichment"] = prec / base if base and base > 0 and prec == prec else nan
            n_sil = sum(a.get(f"type_{t}", 0.0) for t in TYPES)
            for t in TYPES:
                out[f"mask_type/{t}"] = a.get(f"type_{t}", 0.0) / n_sil if n_sil else 0.0
        if "g2_all" in a:
            out["s2t/grad_share"] = a["g2_det"] / a["g2_all"] if a["g2_all"] > 0 else 0.0
            n_det, n_pos = a.get("detected", 0.0), a.get("n_pos", 0.0)
            if n_det and n_pos > n_det and a["g2_pos"] > a["g2_det"] > 0:
                # mean per-token ‖∇_z‖² of detected tokens over that of the other positive-advantage tokens
                out["s2t/grad_ratio"] = (a["g2_det"] / n_det) / ((a["g2_pos"] - a["g2_det"]) / (n_pos - n_det))
        return out

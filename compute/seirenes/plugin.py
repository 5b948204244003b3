"""The Seirênes plug-in on the shared GRPO core (spec seirenes §2 "Bundle planner", "Rewards", "Loss").

Per step and question q (phases batched across questions):

* phase 0 — R1: G clean solves, group (q, clean); R2: K Adversary hints ``<adv> Q → hint <eoh>``, group (q, adv);
* phase 1 — R3: G_h solves of ``Q <h> hint`` for every *valid* hint k, group (q, hint k), scored against the
  original gold answer.

Rewards: Reasoner r = 1[correct]; Adversary r_adv = valid·max(0, p̂_clean − p̂_hint(k)) − c_inv·(1 − valid)
(``signed`` drops the max).  Advantages are the core's per-group GRPO.  Token weights give each role (clean,
hinted, adv) the share s_role of the mini-batch's total token weight: ω = s_role·M/M_role on that role's tokens.

Arms (``mode``): ``seirenes`` (c); ``static`` (b) — K hints drawn uniformly from the grammar, no Adversary rows;
``clean`` (a) — G + K·G_h clean samples per q (equal Reasoner sequences per step); ``frozen_adv`` (d) — as (c) but
the K hints per question are sampled (T as the rollouts) from a copy of the model taken before the first update
(the SFT Adversary, frozen), so there are no Adversary rows and no Adversary loss; invalid hints are dropped as in
(c), and the clean and hinted roles keep their shares of the token weight (renormalised without the Adversary's).
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from compute.core.rl.plugins import LossContext, Plugin, RolloutSpec, TokenWeights
from compute.seirenes.evaluate import adversary_texts
from compute.seirenes.hints import ROLE_TOKENS, TRAIN_FAMILIES, adversary_reward, check_hint, family_parts, sample_hint

ROLES = ("solve", "hinted", "adv")


@dataclass
class SelfPlayConfig:
    """Knobs of the bundle (spec §3 E1)."""

    mode: str = "seirenes"  # seirenes | static | clean | frozen_adv
    G: int = 6
    K: int = 4
    G_h: int = 4
    max_hint_tokens: int = 24
    max_sentences: int = 1  # compound hints: 1…S training-family sentences
    c_inv: float = 0.1
    variant: str = "clipped"  # clipped | signed
    drop_counts_format_fail: bool = True
    shares: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)  # clean, hinted, adv


def role_weights(roles: list[str], mask: torch.Tensor, shares: tuple[float, ...]) -> torch.Tensor:
    """ω [B, T]: role r's tokens share s_r of Σ mask (shares renormalised over the roles present)."""
    m = mask.float()
    role_tok = {r: float(m[[i for i, x in enumerate(roles) if x == r]].sum()) for r in ROLES}
    present = [r for r in ROLES if role_tok[r] > 0]
    s = {r: shares[ROLES.index(r)] for r in present}
    z = sum(s.values()) or 1.0
    total = float(m.sum())
    w = torch.ones_like(m)
    for i, r in enumerate(roles):
        if r in s:
            w[i] = s[r] / z * total / role_tok[r]
    return w


class Seirenes(Plugin):
    """Adversarial self-play bundle (arm c) and its baselines (arms a, b) as one plug-in."""

    name = "seirenes"
    extra_tokens = ROLE_TOKENS

    def __init__(self, cfg: SelfPlayConfig | None = None) -> None:
        self.cfg = cfg or SelfPlayConfig()
        self.log: list[dict[str, Any]] = []  # per-step records for the dashboard
        self.frozen: Any = None  # arm (d): the Adversary's model, copied before the first update

    def frozen_hint_texts(self, problems: list[Any], state: Any) -> list[list[str]]:
        """Arm (d): K decoded Adversary samples per problem from the frozen copy (the trainer's generator, T and
        max_new, so the hints are drawn as (c)'s Adversary rows are)."""
        cfg = state.cfg
        return adversary_texts(
            self.frozen, state.task, problems, self.cfg.K, cfg.temperature, cfg.max_new, state.generator
        )

    # -- rollouts ---------------------------------------------------------------------------------
    def plan_rollouts(self, specs: list[RolloutSpec], state: Any) -> list[RolloutSpec]:
        c, task, s = self.cfg, state.task, state.step
        if c.mode == "frozen_adv" and self.frozen is None:
            self.frozen = copy.deepcopy(state.model).eval()
        if state.phase == 0:
            out = []
            for i, sp in enumerate(specs):
                n = c.G + c.K * c.G_h if c.mode == "clean" else c.G
                out.append(RolloutSpec(sp.prompt, n, sp.problem, (s, i, "clean"), "solve", meta={"q": i}))
                if c.mode == "seirenes" and c.K > 0:
                    out.append(
                        RolloutSpec(
                            task.prompt(sp.problem, "adv"), c.K, sp.problem, (s, i, "adv"), "adv", meta={"q": i}
                        )
                    )
            state.extra["seirenes_problems"] = [sp.problem for sp in specs]
            return out
        if state.phase != 1 or c.mode == "clean" or c.K == 0:
            return []
        problems = state.extra["seirenes_problems"]
        adv_rows: list[dict[str, Any]] = []
        out = []
        if c.mode in ("seirenes", "frozen_adv"):
            if c.mode == "seirenes":
                b = state.rollouts[0]
                drafts = [(b.specs[r].meta["q"], b.texts[r]) for r, role in enumerate(b.roles) if role == "adv"]
            else:
                texts = self.frozen_hint_texts(problems, state)
                drafts = [(q, t) for q, ts in enumerate(texts) for t in ts]
            per_q: Counter[int] = Counter()
            for q, text in drafts:
                ok, fam, body = check_hint(text, int(problems[q].answer), c.max_hint_tokens, c.max_sentences)
                k = per_q[q]
                per_q[q] += 1
                adv_rows.append({"q": q, "k": k, "valid": ok, "family": fam, "hint": body})
                if ok:
                    p = problems[q]
                    out.append(
                        RolloutSpec(
                            task.prompt(p, "solve", {"hint": body}),
                            c.G_h,
                            p,
                            (s, q, "hint", k),
                            "hinted",
                            meta={"q": q, "k": k, "family": fam, "hint": body},
                        )
                    )
        else:  # static: K hints drawn uniformly from the training grammar
            for q, p in enumerate(problems):
                for k in range(c.K):
                    body, fam = sample_hint(p, state.rng, c.max_sentences)
                    out.append(
                        RolloutSpec(
                            task.prompt(p, "solve", {"hint": body}),
                            c.G_h,
                            p,
                            (s, q, "hint", k),
                            "hinted",
                            meta={"q": q, "k": k, "family": fam, "hint": body},
                        )
                    )
        state.extra["seirenes_adv"] = adv_rows
        return out

    # -- rewards ----------------------------------------------------------------------------------
    def assign_rewards(self, batch: Any, rewards: torch.Tensor, state: Any) -> torch.Tensor:
        c = self.cfg
        correct = batch.correct.float()
        fmt_fail = torch.tensor([info.get("parsed") is None for info in batch.infos], dtype=torch.float32)
        clean: dict[int, list[int]] = {}
        hinted: dict[tuple[int, int], list[int]] = {}
        adv_idx: list[int] = []
        for r, role in enumerate(batch.roles):
            meta = batch.specs[r].meta
            if role == "solve":
                clean.setdefault(meta["q"], []).append(r)
            elif role == "hinted":
                hinted.setdefault((meta["q"], meta["k"]), []).append(r)
            else:
                adv_idx.append(r)
        p_clean = {q: float(correct[ix].mean()) for q, ix in clean.items()}
        p_hint = {}
        for key, ix in hinted.items():
            if c.drop_counts_format_fail:
                p_hint[key] = float(correct[ix].mean())
            else:  # only well-formed wrong answers count as a drop
                p_hint[key] = 1.0 - float(((1 - correct[ix]) * (1 - fmt_fail[ix])).mean())
        out = rewards.clone()
        recs = state.extra.get("seirenes_adv", [])
        adv_r = []
        for rec in recs:  # arm (d) has no Adversary rows: its hints' rewards are recorded, never trained on
            ph = p_hint.get((rec["q"], rec["k"]), float("nan"))
            val = adversary_reward(p_clean.get(rec["q"], 0.0), ph, rec["valid"], c.c_inv, c.variant)
            rec.update(p_clean=p_clean.get(rec["q"], 0.0), p_hint=ph, reward=val)
            adv_r.append(val)
        for r, val in zip(adv_idx, adv_r, strict=False):
            out[r] = val
        # per-step statistics (read by on_step_end)
        groups = {}
        for r in range(len(out)):
            groups.setdefault(int(batch.groups[r]), []).append(float(out[r]))
        dead = sum(1 for v in groups.values() if len(v) < 2 or max(v) == min(v)) / max(1, len(groups))
        h_rows = [i for ix in hinted.values() for i in ix]
        c_rows = [i for ix in clean.values() for i in ix]
        valid = [rec["valid"] for rec in recs]
        if c.mode == "static":  # family labels of the hints the Reasoner solved under (one per hint group)
            labels = [batch.specs[ix[0]].meta["family"] for ix in hinted.values()]
        else:
            labels = [rec["family"] for rec in recs if rec["valid"]]
        fam_counts = Counter(f for x in labels for f in family_parts(x))
        pairs = [(rec["p_clean"], rec["p_hint"]) for rec in recs if rec["valid"]]
        state.extra["seirenes_stats"] = {
            "selfplay/p_clean": float(correct[c_rows].mean()) if c_rows else float("nan"),
            "selfplay/p_hint": float(correct[h_rows].mean()) if h_rows else float("nan"),
            "selfplay/adv_reward": float(np.mean(adv_r)) if adv_r else float("nan"),
            "selfplay/valid_rate": float(np.mean(valid)) if valid else float("nan"),
            "selfplay/format_fail_hinted": float(fmt_fail[h_rows].mean()) if h_rows else float("nan"),
            "selfplay/no_signal_share": float(np.mean([p_clean[q] == 0 for q in p_clean])) if p_clean else 0.0,
            "selfplay/dead_groups": dead,
            "selfplay/tokens_solve": float(batch.response_mask[c_rows].sum()) if c_rows else 0.0,
            "selfplay/tokens_hinted": float(batch.response_mask[h_rows].sum()) if h_rows else 0.0,
            "selfplay/tokens_adv": float(batch.response_mask[adv_idx].sum()) if adv_idx else 0.0,
            **{f"family/{f}": float(fam_counts.get(f, 0)) for f in TRAIN_FAMILIES},
            "selfplay/sentences_per_hint": float(np.mean([len(family_parts(x)) for x in labels])) if labels else 0.0,
        }
        state.extra["seirenes_pairs"] = pairs
        return out

    # -- loss -------------------------------------------------------------------------------------
    def token_weights(self, ctx: LossContext) -> TokenWeights | None:
        if self.cfg.mode not in ("seirenes", "frozen_adv"):
            return None
        return TokenWeights(weight=role_weights(ctx.roles, ctx.mask, self.cfg.shares))

    def on_step_end(self, stats: dict[str, float], state: Any) -> dict[str, float] | None:
        st = dict(state.extra.get("seirenes_stats", {}))
        recs = state.extra.get("seirenes_adv", [])
        self.log.append({"step": state.step, "stats": st, "hints": [dict(r) for r in recs]})
        return st

"""Entry points of the Seirênes app (spec seirenes §3): self-play training (E1) and arm comparison with the
transfer attack (E2 + E3).  Each takes ``(params, reporter)`` as in docs/paper-app-contract.md."""

from __future__ import annotations

import copy
import math
import time
from collections import Counter
from typing import Any

import numpy as np
import torch

from compute.core.rl.trainer import GRPOTrainer
from compute.core.runtime import seed_everything
from compute.core.tasks.base import split_rng
from compute.seirenes.config import SeirenesConfig
from compute.seirenes.evaluate import accuracy, adversary_suite, suites
from compute.seirenes.hints import TRAIN_FAMILIES
from compute.seirenes.plugin import Seirenes
from compute.seirenes.task import load_or_build

ARM_LABEL = {
    "clean": "(a) GRPO-clean",
    "static": "(b) GRPO-static",
    "seirenes": "(c) Seirênes",
    "frozen_adv": "(d) frozen Adversary",
}


def _setup(params: dict[str, Any]) -> SeirenesConfig:
    cfg = SeirenesConfig.from_params(params)
    if "threads" in params:
        torch.set_num_threads(max(1, int(params["threads"])))
    seed_everything(cfg.seed)
    return cfg


def _adv_kw(cfg: SeirenesConfig) -> dict[str, int]:
    return {"max_tokens": cfg.hint_tokens, "max_sentences": cfg.hint_sentences}


def _eval_all(model, task, problems, fixed: dict[str, Any], cfg: SeirenesConfig, seed: int) -> dict[str, float]:
    out = {k: accuracy(model, task, problems, h, cfg.max_new) for k, h in fixed.items()}
    own, frac = adversary_suite(model, task, problems, seed, **_adv_kw(cfg))
    out["self_hinted"] = accuracy(model, task, problems, own, cfg.max_new)
    out["own_hint_valid"] = frac
    return out


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    p = (p + 0.5) / (p + 0.5).sum()
    q = (q + 0.5) / (q + 0.5).sum()
    return float((p * np.log(p / q)).sum())


def selfplay_run(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """E1: Seirênes self-play; clean / hinted / held-out / self-hinted accuracy, adversary reward, valid-hint rate,
    co-evolution portrait (p̂_clean vs p̂_hint per step), hint-family histogram, top-drop hints, live."""
    cfg = _setup(params)
    model, task = load_or_build(cfg.sft(), reporter.data_dir, reporter)
    plugin = Seirenes(cfg.selfplay("seirenes"))
    trainer = GRPOTrainer(model, task, cfg.grpo(cfg.seed), [plugin])
    problems = task.sample(cfg.n_eval, split_rng(cfg.seed + 10_000, "test"), "test")
    fixed = suites(problems, cfg.seed, cfg.hint_sentences)
    ev0 = _eval_all(model, task, problems, fixed, cfg, cfg.seed)
    reporter.scalars(0, {f"eval/{k}": v for k, v in ev0.items()})
    portrait: list[tuple[int, float, float]] = []
    fams: list[list[float]] = []
    top: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for s in range(cfg.steps):
        trainer.state.step = s
        stats, _ = trainer.train_step()
        stats["selfplay/gap"] = stats.get("selfplay/p_clean", 0.0) - stats.get("selfplay/p_hint", 0.0)
        if (s + 1) % cfg.eval_every == 0 or s == cfg.steps - 1:
            ev = _eval_all(trainer.model, task, problems, fixed, cfg, cfg.seed)
            stats.update({f"eval/{k}": v for k, v in ev.items()})
            stats["eval/gap"] = ev["clean"] - ev["train_family"]
        reporter.scalars(s + 1, {k: v for k, v in stats.items() if isinstance(v, float) and math.isfinite(v)})
        nan = float("nan")
        portrait.append((s + 1, stats.get("selfplay/p_clean", nan), stats.get("selfplay/p_hint", nan)))
        fams.append([stats.get(f"family/{f}", 0.0) for f in TRAIN_FAMILIES])
        for h in plugin.log[-1]["hints"]:
            if h["valid"] and math.isfinite(h.get("p_hint", float("nan"))):
                top.append(
                    {
                        "step": s + 1,
                        "hint": h["hint"],
                        "family": h["family"],
                        "p_clean": h["p_clean"],
                        "p_hint": h["p_hint"],
                        "drop": h["p_clean"] - h["p_hint"],
                    }
                )
        top = sorted(top, key=lambda r: -r["drop"])[:10]
        if (s + 1) % 5 == 0 or s == cfg.steps - 1:
            pts = [p for p in portrait if math.isfinite(p[1]) and math.isfinite(p[2])]
            reporter.figure(
                "portrait",
                {
                    "data": [
                        {
                            "type": "scatter",
                            "mode": "markers+lines",
                            "x": [p[1] for p in pts],
                            "y": [p[2] for p in pts],
                            "marker": {"color": [p[0] for p in pts], "colorscale": "Viridis", "showscale": True},
                        }
                    ],
                    "layout": {"xaxis": {"title": "p̂_clean"}, "yaxis": {"title": "p̂_hint"}},
                },
            )
            f = np.array(fams)
            reporter.figure(
                "families",
                {
                    "data": [
                        {"type": "bar", "name": fam, "x": list(range(1, len(f) + 1)), "y": f[:, j].tolist()}
                        for j, fam in enumerate(TRAIN_FAMILIES)
                    ],
                    "layout": {"barmode": "stack", "xaxis": {"title": "step"}, "yaxis": {"title": "valid hints"}},
                },
            )
            reporter.table("top_hints", top)
        reporter.progress(
            (s + 1) / cfg.steps,
            f"step {s + 1}/{cfg.steps}: adv reward {stats.get('selfplay/adv_reward', float('nan')):.3f}",
        )
        if reporter.should_stop():
            break
    f = np.array(fams) if fams else np.zeros((2, 4))
    half = max(1, len(f) // 2)
    last = {k: v for k, v in stats.items() if k.startswith("eval/")}
    adv = [r["stats"].get("selfplay/adv_reward", float("nan")) for r in plugin.log]
    summary = {
        **{f"sft_{k}": v for k, v in ev0.items()},
        **{f"final_{k[5:]}": v for k, v in last.items()},
        "mean_adv_reward": float(np.nanmean(adv)) if adv else float("nan"),
        "family_kl_early_late": _kl(f[:half].sum(0), f[half:].sum(0)),
        "seconds_per_step": (time.perf_counter() - t0) / max(1, len(plugin.log)),
    }
    reporter.table("summary", [summary])
    return summary


def arm_trainer(cfg: SeirenesConfig, sft_model: Any, task: Any, arm: str, seed: int) -> GRPOTrainer:
    """A GRPO trainer for one arm (clean, static, seirenes or frozen_adv) on a private copy of the SFT model, torch seeded."""
    torch.manual_seed(seed)
    return GRPOTrainer(copy.deepcopy(sft_model), task, cfg.grpo(seed), [Seirenes(cfg.selfplay(arm))])


def arms_run(params: dict[str, Any], reporter: Any) -> dict[str, Any]:
    """E2 + E3: arms (a) clean, (b) static, (c) Seirênes from the same SFT checkpoint × seeds; accuracy on clean,
    training-family, held-out-family and self-hinted suites; transfer attack of hint sources on frozen victims."""
    cfg = _setup(params)
    sft_model, task = load_or_build(cfg.sft(), reporter.data_dir, reporter)
    arms = [a.strip() for a in cfg.arms.split(",") if a.strip()]
    problems = task.sample(cfg.n_eval, split_rng(cfg.seed + 10_000, "test"), "test")
    fixed = suites(problems, cfg.seed, cfg.hint_sentences)
    rows, attack = [], []
    n_runs, done = len(arms) * cfg.n_seeds, 0
    for si in range(cfg.n_seeds):
        seed = cfg.seed + si
        models = {}
        for arm in arms:
            trainer = arm_trainer(cfg, sft_model, task, arm, seed)
            for s in range(cfg.steps):
                trainer.state.step = s
                stats, _ = trainer.train_step()
                reporter.scalars(s + 1, {f"curve/{arm}_s{seed}_train_acc": stats["acc/train"]})
                if reporter.should_stop():
                    break
            models[arm] = trainer.model
            done += 1
            reporter.progress(done / (n_runs + 1), f"seed {seed}: arm {arm} trained")
        # hint sources: random grammar, SFT adversary, adversary of (c) (if trained)
        sources = {
            "random": fixed.get("train_compound", fixed["train_family"]),  # same grammar as the Adversary's
            "sft_adv": adversary_suite(sft_model, task, problems, seed, **_adv_kw(cfg))[0],
        }
        if "seirenes" in models:
            sources["seirenes_adv"] = adversary_suite(models["seirenes"], task, problems, seed, **_adv_kw(cfg))[0]
        for arm, m in [("sft", sft_model), *models.items()]:
            ev = {k: accuracy(m, task, problems, h, cfg.max_new) for k, h in fixed.items()}
            src = {k: accuracy(m, task, problems, h, cfg.max_new) for k, h in sources.items()}
            rows.append(
                {
                    "arm": ARM_LABEL.get(arm, "SFT"),
                    "seed": seed,
                    **ev,
                    "self_hinted": src.get("seirenes_adv", float("nan")),
                }
            )
            for k, v in src.items():
                attack.append({"victim": arm, "source": k, "seed": seed, "drop": ev["clean"] - v})
        reporter.table("results", rows)
        reporter.table("attack", attack)
    agg = []
    for arm in ["sft", *arms]:
        lab = ARM_LABEL.get(arm, "SFT")
        rs = [r for r in rows if r["arm"] == lab]
        d = {"arm": lab}
        for k in (
            "clean",
            "train_family",
            "heldout",
            "self_hinted",
            *(["train_compound"] if "train_compound" in fixed else []),
        ):
            v = np.array([r[k] for r in rs], dtype=float)
            d[k] = float(np.nanmean(v)) if len(v) and not np.isnan(v).all() else float("nan")  # no (c): no own hints
            d[f"{k}_sd"] = float(np.nanstd(v)) if len(v) > 1 else 0.0
        agg.append(d)
    reporter.table("arms", agg)
    mat = Counter()
    cnt = Counter()
    for a in attack:
        mat[(a["victim"], a["source"])] += a["drop"]
        cnt[(a["victim"], a["source"])] += 1
    victims = ["sft", *arms]
    srcs = sorted({a["source"] for a in attack})
    z = [[100 * mat[(v, s)] / max(1, cnt[(v, s)]) for s in srcs] for v in victims]
    reporter.figure(
        "attack_heatmap",
        {
            "data": [{"type": "heatmap", "x": srcs, "y": victims, "z": z, "colorscale": "Reds"}],
            "layout": {"title": "accuracy drop (points)"},
        },
    )
    by = {d["arm"]: d for d in agg}
    summary: dict[str, Any] = {"n_seeds": cfg.n_seeds, "steps": cfg.steps}
    a, b, c, d = (by.get(ARM_LABEL[x]) for x in ("clean", "static", "seirenes", "frozen_adv"))
    if a and c:
        summary["gain_c_minus_a_heldout_pts"] = 100 * (c["heldout"] - a["heldout"])
        summary["gain_c_minus_a_selfhinted_pts"] = 100 * (c["self_hinted"] - a["self_hinted"])
        summary["clean_c_minus_a_pts"] = 100 * (c["clean"] - a["clean"])
    if b and c:
        summary["gain_c_minus_b_heldout_pts"] = 100 * (c["heldout"] - b["heldout"])
    if c and d:
        summary["gain_c_minus_d_heldout_pts"] = 100 * (c["heldout"] - d["heldout"])
    if a and d:
        summary["gain_d_minus_a_heldout_pts"] = 100 * (d["heldout"] - a["heldout"])
    if "seirenes" in arms and "clean" in arms:
        n_ca = max(1, cnt[("clean", "seirenes_adv")])
        summary["drop_a_under_c_hints_pts"] = 100 * mat[("clean", "seirenes_adv")] / n_ca
        summary["drop_a_under_random_pts"] = 100 * mat[("clean", "random")] / max(1, cnt[("clean", "random")])
    reporter.table("summary", [summary])
    reporter.progress(1.0, "done")
    return summary

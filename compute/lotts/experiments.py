"""The measurement loops behind the entry points (no reporter formatting here beyond callbacks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .data import DEFECTS, Attributes, add_defect, all_attributes, render
from .diffusion import T_TRAIN, Sampler
from .localize import LAYER_SETS, auroc, capture_maps, iou, score_map, top_r_mask, upsample_scores
from .search import Node, RefineSpec, grow, noise_gen, sample_candidates
from .verifiers import p_clean, score, template_residual
from .world import World


def pick_prompts(n: int, seed: int) -> list[Attributes]:
    """``n`` distinct captions drawn without replacement from the 216 (shape, colour, cell) triples."""
    rng = np.random.default_rng([seed, 3])
    allp = all_attributes()
    return [allp[i] for i in rng.choice(len(allp), size=n, replace=False)]


# ------------------------------------------------------------------------------------------------
# Exp. 2: planted-defect localization
# ------------------------------------------------------------------------------------------------
@dataclass
class PlantedSet:
    clean: torch.Tensor  # (B, 3, S, S)
    x: torch.Tensor  # defective images
    masks: np.ndarray  # (B, S, S) bool
    attrs: list[Attributes]
    kinds: list[str]


def planted_set(n: int, size: int, seed: int) -> PlantedSet:
    """Clean renders of random captions, each with one planted defect (kinds cycle through all five)."""
    rng = np.random.default_rng([seed, 5])
    attrs = pick_prompts(min(n, 216), seed) if n <= 216 else [all_attributes()[i % 216] for i in range(n)]
    clean, xs, ms, kinds = [], [], [], []
    for i, a in enumerate(attrs):
        img = render(a, size, rng)
        kind = DEFECTS[i % len(DEFECTS)]
        for _ in range(20):
            d, m = add_defect(img, kind, rng)
            if m.sum() >= 2:
                break
        clean.append(img)
        xs.append(d)
        ms.append(m)
        kinds.append(kind)
    return PlantedSet(torch.as_tensor(np.stack(clean)), torch.as_tensor(np.stack(xs)), np.stack(ms), attrs, kinds)


ABLATIONS = {
    "full ①–④": {},
    "no ① contrast": {"contrast": False},
    "no ② propagation": {"propagate": False},
    "no ③ prior (λ=0)": {"lam": 0.0},
    "no ④ (mean threshold)": {"threshold": "mean"},
}


def localization_metrics(
    world: World,
    ps: PlantedSet,
    r: float,
    lam: float,
    loc_t: tuple[float, ...],
    layers: str,
    seed: int,
    dilate: int = 0,
) -> dict:
    """AUROC of P and IoU of M vs the planted masks: full pipeline, ablations, per (timestep, layer)."""
    net = world.net
    size = ps.x.shape[-1]
    gen = noise_gen(seed, 11)
    before = net.nfe
    per = capture_maps(net, ps.x, ps.attrs, loc_t, "all", gen, per_step=True)
    loc_nfe = (net.nfe - before) / len(ps.attrs)
    want = LAYER_SETS[layers]
    chosen = [k for k in per if k[1].split("_")[0] in want]

    def avg(keys: list) -> tuple:
        n = len(keys)
        pos = type(per[keys[0]][0])(sum(per[k][0].sa for k in keys) / n, sum(per[k][0].ca for k in keys) / n)
        neg = type(per[keys[0]][1])(sum(per[k][1].sa for k in keys) / n, sum(per[k][1].ca for k in keys) / n)
        return pos, neg

    def metrics(P: torch.Tensor, threshold: str = "top_r", pix_side: int | None = None) -> dict:
        scores = upsample_scores(P, size).numpy()
        if threshold == "top_r":
            M = top_r_mask(P, r, size, dilate)[:, 0].numpy() > 0.5
        else:
            M = (upsample_scores(P - P.mean(1, keepdim=True), size) > 0).numpy()
        a = [auroc(scores[i], ps.masks[i]) for i in range(len(ps.attrs))]
        j = [iou(M[i], ps.masks[i]) for i in range(len(ps.attrs))]
        rec = [float((M[i] & ps.masks[i]).sum() / max(1, ps.masks[i].sum())) for i in range(len(ps.attrs))]
        return {
            "auroc": float(np.nanmean(a)),
            "iou": float(np.nanmean(j)),
            "recall": float(np.mean(rec)),
            "auroc_each": a,
            "iou_each": j,
            "M": M,
            "scores": scores,
        }

    pos, neg = avg(chosen)
    out: dict = {"loc_nfe_per_image": loc_nfe, "ablations": {}, "per_step": {}}
    for name, kw in ABLATIONS.items():
        kw = dict(kw)
        thr = kw.pop("threshold", "top_r")
        P = score_map(pos, neg, kw.pop("lam", lam), **kw)
        out["ablations"][name] = metrics(P, thr)
    full = out["ablations"]["full ①–④"]
    for key in per:
        p1, n1 = per[key]
        m = metrics(score_map(p1, n1, lam))
        out["per_step"][key] = {"auroc": m["auroc"], "iou": m["iou"]}
    # random-mask IoU: expected value over 20 random masks of the same density
    rg = noise_gen(seed, 12)
    n_cells = pos.ca.shape[1]
    rand = []
    for _ in range(20):
        M = top_r_mask(torch.rand(len(ps.attrs), n_cells, generator=rg), r, size, dilate)[:, 0].numpy() > 0.5
        rand.append(np.nanmean([iou(M[i], ps.masks[i]) for i in range(len(ps.attrs))]))
    out["random_iou"] = float(np.mean(rand))
    # the best IoU any mask of the same size can reach: |true| / |M| (defects are smaller than r·S²)
    m_size = top_r_mask(torch.zeros(1, n_cells), r, size, dilate).sum().item()
    out["iou_ceiling"] = float(np.mean([min(1.0, m.sum() / m_size) for m in ps.masks]))
    out["full"] = full
    out["by_kind"] = {
        k: {
            "auroc": float(np.nanmean([a for a, kk in zip(full["auroc_each"], ps.kinds, strict=True) if kk == k])),
            "iou": float(np.nanmean([a for a, kk in zip(full["iou_each"], ps.kinds, strict=True) if kk == k])),
        }
        for k in DEFECTS
        if k in ps.kinds
    }
    return out


# ------------------------------------------------------------------------------------------------
# Exp. 1: quality vs NFE
# ------------------------------------------------------------------------------------------------
@dataclass
class MethodResult:
    nfe: list[float]  # per budget point (mean per prompt)
    select: np.ndarray  # (n_points, n_prompts) selection-verifier score of the returned image
    heldout: np.ndarray  # held-out CNN score
    p_clean: np.ndarray  # held-out p(clean)
    template: np.ndarray  # template residual (lower is better)
    chosen: list[torch.Tensor]  # (n_prompts, 3, S, S) per budget point


def evaluate(world: World, x: torch.Tensor, attrs: list[Attributes]) -> dict[str, np.ndarray]:
    return {
        "select": score(world.select, x, attrs).numpy(),
        "heldout": score(world.heldout, x, attrs).numpy(),
        "p_clean": p_clean(world.heldout, x).numpy(),
        "template": template_residual(x, attrs).numpy(),
    }


def _pack(world: World, chosen: list[torch.Tensor], nfe: list[float], attrs: list[Attributes]) -> MethodResult:
    ev = [evaluate(world, c, attrs) for c in chosen]
    return MethodResult(
        nfe, *(np.stack([e[k] for e in ev]) for k in ("select", "heldout", "p_clean", "template")), chosen
    )


@dataclass
class QualityRun:
    attrs: list[Attributes]
    candidates: torch.Tensor  # (P, N, 3, S, S)
    cand_scores: torch.Tensor  # (P, N)
    nfe_sample: float
    bon: MethodResult
    methods: dict[str, MethodResult]
    trees: dict[str, list[list]]  # method → per prompt → trees (first max k candidates)
    consistency: dict[str, float]


def quality_vs_nfe(world: World, cfg, seed: int, progress=None) -> QualityRun:
    """Best-of-N for N ∈ bon_n and LoTTS / Resampling / random-mask LoTTS for k ∈ lotts_k on the same noises."""
    sampler = Sampler(world.net, cfg.steps, cfg.cfg_scale)
    attrs = pick_prompts(cfg.n_prompts, seed)
    n_max = max(max(cfg.bon_n), max(cfg.lotts_k))
    if progress:
        progress(0.02, f"sampling {n_max} candidates for {len(attrs)} prompts")
    X, S, per = sample_candidates(sampler, attrs, n_max, seed, world.select)
    P = len(attrs)
    # Best-of-N: argmax of the selection verifier over the first N candidates
    chosen, nfe = [], []
    for N in cfg.bon_n:
        j = S[:, :N].argmax(1)
        chosen.append(X[torch.arange(P), j])
        nfe.append(N * per)
    bon = _pack(world, chosen, nfe, attrs)
    k_max = max(cfg.lotts_k)
    t0 = int(round(cfg.t0_frac * T_TRAIN))
    methods, trees_all = {}, {}
    for mi, method in enumerate(("lotts", "resample", "random_mask")):
        if progress:
            progress(0.3 + 0.65 * mi / 3, f"{method}: refining {P}×{k_max} candidates")
        spec = RefineSpec(
            method,
            cfg.branch,
            cfg.depth,
            cfg.r,
            t0,
            cfg.h_hol,
            cfg.lam,
            tuple(cfg.loc_t),
            cfg.layers,
            cfg.dilate,
            cfg.propagation == "sa",
        )
        roots = [Node(X[p, j], float(S[p, j]), 0, per) for p in range(P) for j in range(k_max)]
        keys = [(p, j) for p in range(P) for j in range(k_max)]
        trees = grow(sampler, roots, [attrs[p] for p, _ in keys], spec, seed, keys, world.select)
        by_prompt = [trees[p * k_max : (p + 1) * k_max] for p in range(P)]
        chosen, nfe = [], []
        for k in cfg.lotts_k:
            best = [max((t.best() for t in tp[:k]), key=lambda n: n.score) for tp in by_prompt]
            chosen.append(torch.stack([b.x for b in best]))
            nfe.append(float(np.mean([sum(t.nfe() for t in tp[:k]) for tp in by_prompt])))
        methods[method] = _pack(world, chosen, nfe, attrs)
        trees_all[method] = by_prompt
    cons = consistency(trees_all["lotts"])
    return QualityRun(attrs, X, S, per, bon, methods, trees_all, cons)


def consistency(trees_by_prompt: list[list]) -> dict[str, float]:
    """max |Δ| outside the mask before the holistic steps; mean |Δ| outside vs inside after them."""
    pre_out, post_out, post_in = [], [], []
    for tp in trees_by_prompt:
        for tree in tp:
            stack = [tree.root]
            while stack:
                n = stack.pop()
                for c in n.children:
                    m = c.mask[0] > 0.5  # (S, S)
                    d_pre = (c.pre_holistic - n.x).abs().amax(0)
                    d_post = (c.x - n.x).abs().mean(0)
                    if (~m).any():
                        pre_out.append(float(d_pre[~m].max()))
                        post_out.append(float(d_post[~m].mean()))
                    if m.any():
                        post_in.append(float(d_post[m].mean()))
                    stack.append(c)
    return {
        "max_abs_change_outside_before_holistic": max(pre_out) if pre_out else 0.0,
        "mean_abs_change_outside_after_holistic": float(np.mean(post_out)) if post_out else 0.0,
        "mean_abs_change_inside_after_holistic": float(np.mean(post_in)) if post_in else 0.0,
    }


def nfe_at_quality(nfe: list[float], q: np.ndarray, target: float) -> float | None:
    """Smallest NFE at which a monotone-interpolated curve (in log NFE) reaches ``target``; None if never."""
    nfe, q = np.asarray(nfe, float), np.asarray(q, float)
    order = np.argsort(nfe)
    nfe, q = nfe[order], np.maximum.accumulate(q[order])
    if q[0] >= target:
        return float(nfe[0])
    for i in range(1, len(nfe)):
        if q[i] >= target:
            f = (target - q[i - 1]) / max(q[i] - q[i - 1], 1e-12)
            return float(np.exp(np.log(nfe[i - 1]) + f * (np.log(nfe[i]) - np.log(nfe[i - 1]))))
    return None

"""Router belief p_c and held-out evaluation per hidden tier (greedy route and plan, or a forced route)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from compute.core.lm.model import positions_from_valid
from compute.core.lm.sampling import generate, left_pad
from compute.steer.scenes import TIERS, scene_kind
from compute.steer.traces import DIRECT, THINK


class RouteHead(torch.nn.Module):
    """A separate route readout (design, ``route_head_lr`` > 0; not in the paper): an offset u·(f − μ) + c added to
    the first-token route log-odds log π(<think>) − log π(<direct>), f the final normed features at the route
    position, μ a fixed centre (the SFT features' mean over training scenes: its squared norm is ~30× the features' variance
    around it, a common part a head on raw features would first have to cancel).  u = c = 0 at the start, so p_c starts at
    the SFT router's.  It is attached to the model unregistered (``attach_route_head``): the core's optimizer, grad
    clipping and ``state_dict`` stay the LM's own; the trainer steps it with its own Adam and learning rate."""

    def __init__(self, centre: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("centre", centre.detach().float().clone())
        self.u = torch.nn.Parameter(torch.zeros_like(self.centre))
        self.c = torch.nn.Parameter(torch.zeros(()))

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return (feats.float() - self.centre) @ self.u + self.c


def attach_route_head(model: Any, head: RouteHead) -> None:
    """Give ``model`` its route head without registering it as a submodule."""
    model.__dict__["route_head"] = head.to(model.device)


def route_head(model: Any) -> RouteHead | None:
    return model.__dict__.get("route_head")


def route_logodds(model: Any, tok: torch.Tensor, mask: torch.Tensor, think_id: int, direct_id: int, t: float = 1.0):
    """(log-odds ℓ of <think> against <direct>, log-probs of the first position) [N], [N, V]: ℓ = (z_think −
    z_direct)/t from the prefill's last position, plus the route head's offset when one is attached."""
    head = route_head(model)
    pos = positions_from_valid(mask)
    if head is None:
        z = model(tok, pos, mask)[:, -1].float() / t
    else:
        z, hidden = model(tok, pos, mask, return_hidden=True)
        z = z[:, -1].float() / t
    lp = torch.log_softmax(z, -1)
    ell = lp[:, think_id] - lp[:, direct_id]
    if head is not None:
        ell = ell + head(model.ln_f(hidden[-1][:, -1]))
    return ell, lp


@torch.no_grad()
def route_probs(model: Any, prompts: list[list[int]], think_id: int, direct_id: int, temperature: float = 1.0):
    """(p_c, mass) [N] from the prefill's first-token distribution: p_c = π(<think>) / (π(<think>) + π(<direct>)),
    the router's binary belief (with the route head's offset on its log-odds when one is attached), and mass =
    π(<think>) + π(<direct>), how much of the first position the two route tokens still hold."""
    tok, mask = left_pad(prompts, 0, model.device)
    was = model.training
    model.eval()
    ell, lp = route_logodds(model, tok, mask, think_id, direct_id, temperature if temperature > 0 else 1.0)
    if was:
        model.train()
    pc = torch.sigmoid(ell).cpu().numpy()
    return pc, (lp[:, think_id].exp() + lp[:, direct_id].exp()).cpu().numpy()


def h2(p: np.ndarray | float) -> np.ndarray:
    """Binary entropy in bits, h₂(p) = −p log₂ p − (1−p) log₂(1−p) (0 at p ∈ {0, 1})."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
        b = np.where(p < 1, -(1 - p) * np.log2(np.where(p < 1, 1 - p, 1.0)), 0.0)
    return a + b


@torch.no_grad()
def rollout_eval(
    model: Any,
    task: Any,
    problems: list[Any],
    route: str | None = None,
    max_new: int = 48,
    temperature: float = 0.0,
    seed: int = 0,
    batch: int = 256,
    keep_text: bool = False,
) -> list[dict[str, Any]]:
    """One response per scene (greedy by default), the route forced when ``route`` is given; per-row records:
    tier, route, tokens (generated, incl. route token and <eos>), pdms, epdms, parsed, p_c, route_mass (and the
    decoded response as ``text`` with ``keep_text``).

    Without ``route`` the router decides between the two route tokens only: <think> iff p_c ≥ ½ (greedy) or with
    probability p_c (``temperature`` > 0), then the plan is decoded after that forced token.  The route is a binary
    decision, and the quota methods force every rollout's route, so probability the first position loses to other
    tokens (``route_mass`` = π(<think>) + π(<direct>) < 1) is never trained back; a free first token would then be
    an unparseable response rather than a route choice."""
    tok = task.tokenizer
    think, direct = tok.stoi[THINK], tok.stoi[DIRECT]
    gen = torch.Generator(device=model.device).manual_seed(seed)
    rows: list[dict[str, Any]] = []
    for i in range(0, len(problems), batch):
        chunk = problems[i : i + batch]
        prompts = [task.prompt(p) for p in chunk]
        pc, mass = route_probs(model, prompts, think, direct)
        if route is not None:
            fp = [[tok.stoi[route]]] * len(chunk)
        elif temperature > 0:
            u = torch.rand(len(chunk), generator=gen, device=model.device).cpu().numpy()
            fp = [[think if u[j] < pc[j] else direct] for j in range(len(chunk))]
        else:
            fp = [[think if pc[j] >= 0.5 else direct] for j in range(len(chunk))]
        g = generate(
            model,
            prompts,
            temperature=temperature,
            max_new=max_new,
            eos_id=tok.eos_id,
            pad_id=tok.pad_id,
            force_prefix=fp,
            generator=gen,
        )
        for j, p in enumerate(chunk):
            ids = g.response[j][g.response_mask[j] > 0].tolist()
            text = tok.decode(ids)
            r, _, info = task.verify(p, text)
            rows.append(
                {
                    **({"text": text} if keep_text else {}),
                    "tier": p.data["tier"],
                    "route": info.get("route"),
                    "tokens": len(ids),
                    "pdms": info["pdms"],
                    "epdms": info["epdms"],
                    "reward": r,
                    "parsed": info["parsed"],
                    "p_c": float(pc[j]),
                    "route_mass": float(mass[j]),
                }
            )
    return rows


def summarise(rows: list[dict[str, Any]], prefix: str = "") -> dict[str, float]:
    """Means overall and per tier: pdms, epdms, CoT ratio (greedy route), p_c, tokens, parse rate."""
    out: dict[str, float] = {}
    groups = {"all": rows, **{t: [r for r in rows if r["tier"] == t] for t in TIERS}}
    for name, rs in groups.items():
        if not rs:
            continue
        out[f"{prefix}pdms_{name}"] = float(np.mean([r["pdms"] for r in rs]))
        out[f"{prefix}epdms_{name}"] = float(np.mean([r["epdms"] for r in rs]))
        out[f"{prefix}cot_{name}"] = float(np.mean([r["route"] == THINK for r in rs]))
        out[f"{prefix}pc_{name}"] = float(np.mean([r["p_c"] for r in rs]))
        out[f"{prefix}tokens_{name}"] = float(np.mean([r["tokens"] for r in rs]))
    out[f"{prefix}parsed"] = float(np.mean([r["parsed"] for r in rows])) if rows else 0.0
    if rows and "route_mass" in rows[0]:
        out[f"{prefix}route_mass"] = float(np.mean([r["route_mass"] for r in rows]))
    return out


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation (average ranks for ties)."""

    def ranks(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=float)
        order = np.argsort(a, kind="mergesort")
        r = np.empty(len(a))
        r[order] = np.arange(len(a), dtype=float)
        for v in np.unique(a):
            m = a == v
            r[m] = r[m].mean()
        return r

    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def forced_route_means(
    model: Any,
    task: Any,
    problems: list[Any],
    route: str,
    n: int,
    temperature: float,
    max_new: int,
    key: str = "reward",
) -> tuple[np.ndarray, np.ndarray]:
    """Per scene, the mean ``key`` score and mean generated tokens of ``n`` rollouts with ``route`` forced (seeds
    0 … n−1; temperature 0 = the greedy plan, one rollout)."""
    rows: list[dict[str, Any]] = []
    for k in range(n):
        rows += rollout_eval(model, task, problems, route, max_new, temperature=temperature, seed=k)
    score = np.array([r[key] for r in rows], float).reshape(n, len(problems)).mean(0)
    tokens = np.array([r["tokens"] for r in rows], float).reshape(n, len(problems)).mean(0)
    return score, tokens


def reward_landscape(
    model: Any,
    task: Any,
    problems: list[Any],
    temperatures: tuple[float, ...] = (1.0, 0.7),
    n: int = 4,
    max_new: int = 64,
) -> list[dict[str, Any]]:
    """Mean EPDMS-lite of n sampled responses per scene with the route forced, per tier and temperature: the reward
    landscape the label-free RL signals see (greedy scores can disagree with it).  Temperature 0 is greedy (one
    response).  After the two route records of a temperature comes a ``cot-direct (paired)`` record: per tier the
    mean over scenes of (CoT − direct), each scene scored by its mean over samples, with its standard error."""
    tier_of = np.array([p.data["tier"] for p in problems])
    groups = [t for t in TIERS if (tier_of == t).any()] + ["all"]
    masks = {t: np.ones(len(problems), bool) if t == "all" else tier_of == t for t in groups}
    out = []
    for temp in temperatures:
        k_samples = 1 if temp == 0.0 else n
        per_scene = {}
        for route in (THINK, DIRECT):
            score, tokens = forced_route_means(model, task, problems, route, k_samples, temp, max_new, "epdms")
            per_scene[route] = score
            rec: dict[str, Any] = {"temperature": temp, "route": route, "samples": k_samples}
            for t in (*TIERS, "all"):
                rec[t] = float(score[masks[t]].mean()) if t in masks else float("nan")
            rec["tokens"] = float(tokens.mean())
            out.append(rec)
        diff = per_scene[THINK] - per_scene[DIRECT]
        paired: dict[str, Any] = {"temperature": temp, "route": "cot-direct (paired)"}
        for t, m in masks.items():
            d = diff[m]
            se = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")
            paired[t] = {"n": int(len(d)), "diff": float(d.mean()), "se": se}
        out.append(paired)
    return out


def audit_table(
    tiers: list[str],
    kinds: list[str],
    cot: dict[str, np.ndarray],
    direct: dict[str, np.ndarray],
    lam: float,
    policy_cot: np.ndarray,
    expert: np.ndarray | None = None,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Per (tier, scene kind) and per tier: is reasoning worth its tokens, and does the router use it there?

    ``cot`` / ``direct`` hold per-scene arrays with the route forced: ``score`` and ``tokens`` (means over the
    sampled rollouts, what the route signal sees) and ``greedy`` (the greedy plan's score).  Per scene the net
    differential metric is Δ = score_cot − score_dir − λ·(tokens_cot − tokens_dir), STEER's Δ in expectation.
    A group's *kind oracle* reasons iff its mean Δ > 0 — the route a router that knew the scene kind and
    maximised the differential metric would pick; ``policy_cot`` (bool per scene) is the router's actual choice.
    Returns the rows (tier, kind, n, Δ ± SE, the greedy score of each route and their difference ± SE, oracle route,
    policy CoT ratio) and per tier the oracle's CoT ratio and greedy score beside the policy's CoT ratio and the
    greedy scores of the same policy with either route forced.  ``expert`` (per scene, optional) adds the expert
    plan's score per kind: the headroom."""
    tiers_a, kinds_a = np.asarray(tiers), np.asarray(kinds)
    policy_cot = np.asarray(policy_cot, dtype=bool)
    delta = cot["score"] - direct["score"] - lam * (cot["tokens"] - direct["tokens"])
    gdiff = cot["greedy"] - direct["greedy"]

    def se(x: np.ndarray) -> float:
        return float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")

    rows: list[dict[str, Any]] = []
    oracle = np.zeros(len(tiers_a), dtype=bool)
    for t in TIERS:
        for k in dict.fromkeys(kinds_a[tiers_a == t].tolist()):
            m = (tiers_a == t) & (kinds_a == k)
            d = float(delta[m].mean())
            oracle[m] = d > 0
            rows.append(
                {
                    "tier": t,
                    "kind": k,
                    "scenes": int(m.sum()),
                    "delta": d,
                    "delta_se": se(delta[m]),
                    **({"expert": float(np.asarray(expert)[m].mean())} if expert is not None else {}),
                    "greedy_cot": float(cot["greedy"][m].mean()),
                    "greedy_direct": float(direct["greedy"][m].mean()),
                    "greedy_cot_minus_direct": float(gdiff[m].mean()),
                    "greedy_se": se(gdiff[m]),
                    "oracle_route": THINK if d > 0 else DIRECT,
                    "policy_cot_ratio": float(policy_cot[m].mean()),
                }
            )
    summary: dict[str, float] = {}
    for t in (*TIERS, "all"):
        m = np.ones(len(tiers_a), bool) if t == "all" else tiers_a == t
        if not m.any():
            continue
        summary[f"oracle_cot_{t}"] = float(oracle[m].mean())
        summary[f"policy_cot_{t}"] = float(policy_cot[m].mean())
        summary[f"oracle_greedy_{t}"] = float(np.where(oracle, cot["greedy"], direct["greedy"])[m].mean())
        summary[f"forced_cot_greedy_{t}"] = float(cot["greedy"][m].mean())
        summary[f"forced_direct_greedy_{t}"] = float(direct["greedy"][m].mean())
        summary[f"agree_{t}"] = float((oracle == policy_cot)[m].mean())
    return rows, summary


def route_audit(
    model: Any,
    task: Any,
    problems: list[Any],
    lam: float,
    samples: int = 8,
    temperature: float = 1.0,
    max_new: int = 64,
    policy_rows: list[dict[str, Any]] | None = None,
    progress: Any = None,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """``audit_table`` measured: both routes forced on every scene, ``samples`` rollouts at ``temperature`` (the
    RL rollout temperature) plus the greedy plan; ``policy_rows`` (``rollout_eval`` with the router deciding)
    give the router's choice, else it is computed greedily.  ``progress(fraction)`` is called after each route."""
    if policy_rows is None:
        policy_rows = rollout_eval(model, task, problems, None, max_new)
    per: dict[str, dict[str, np.ndarray]] = {}
    for i, route in enumerate((THINK, DIRECT)):
        score, tokens = forced_route_means(model, task, problems, route, samples, temperature, max_new)
        greedy, _ = forced_route_means(model, task, problems, route, 1, 0.0, max_new)
        per[route] = {"score": score, "tokens": tokens, "greedy": greedy}
        if progress is not None:
            progress((i + 1) / 2)
    return audit_table(
        [p.data["tier"] for p in problems],
        [scene_kind(p.data["scene"]) for p in problems],
        per[THINK],
        per[DIRECT],
        lam,
        np.array([r["route"] == THINK for r in policy_rows]),
        np.array([p.data["analysis"].expert_score for p in problems]),
    )

"""Entry points of the four experiments: train (E1), zero_shot (E2), context_probe (E3), ablation (E4).

Checkpoints are cached under ``reporter.data_dir / "modular_control" / "ckpt"`` keyed by the full training
configuration; E2–E4 train the ones they need on first use (visible as progress in that run) and reuse them.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from compute.core.reporter import Reporter
from compute.core.runtime import seed_everything
from compute.modular_control.config import (
    ARCH_SETS,
    FAMILY_SETS,
    REVEAL,
    AblationConfig,
    ProbeConfig,
    TrainConfig,
    ZeroShotConfig,
)
from compute.modular_control.envs import BatchEnv, DynamicsRange, KinematicsRange
from compute.modular_control.models import ModelConfig, Policy, n_params
from compute.modular_control.morph import split_names, visible_mask
from compute.modular_control.ppo import PPOConfig
from compute.modular_control.ppo import train as ppo_train
from compute.modular_control.probe import ridge_r2

ARCH_LABEL = {
    "mlp": "MLP",
    "metamorph": "MetaMorph",
    "amorpheus": "Amorpheus",
    "modumorph": "ModuMorph",
    "modrec": "ModRec",
}


# -- training ------------------------------------------------------------------------------------
def build_policy(cfg: TrainConfig) -> Policy:
    mc = ModelConfig(arch=cfg.arch, order=cfg.order, recurrent=cfg.recurrent, attn=cfg.attn, use_ctx=cfg.use_ctx)
    return Policy(mc, visible_mask(REVEAL[cfg.reveal]))


def train_env(cfg: TrainConfig, names: list[str]) -> BatchEnv:
    kin = KinematicsRange(cfg.kin_lo, cfg.kin_hi, pool=1 if cfg.kin_lo == cfg.kin_hi == 1.0 else 4)
    return BatchEnv(
        names, cfg.n_slots, seed=cfg.seed, dynamics=DynamicsRange(), kinematics=kin, episode_len=cfg.episode_len
    )


def train_policy(
    cfg: TrainConfig, reporter: Reporter, span: tuple[float, float] = (0.0, 1.0), live: bool = True
) -> tuple[Policy, dict[str, Any]]:
    """Recurrent PPO on the training robots of ``cfg``; streams per-robot returns when ``live``."""
    seed_everything(cfg.seed)
    train_names, _ = split_names(FAMILY_SETS[cfg.families], cfg.split_seed)
    env = train_env(cfg, train_names)
    policy = build_policy(cfg)
    pcfg = PPOConfig(bptt=cfg.bptt, epochs=cfg.epochs)
    recent: dict[int, list[float]] = {}
    state: dict[str, Any] = {"last": {}}
    t0 = time.perf_counter()
    tag = f"{ARCH_LABEL[cfg.arch]} seed {cfg.seed}"

    def callback(steps: int, st: dict[str, float], finished: list[tuple[int, float, int]]) -> bool:
        for k, ret, _ in finished:
            recent.setdefault(k, []).append(ret)
        means = {train_names[k]: float(np.mean(v[-10:])) for k, v in recent.items()}
        if live:
            reporter.scalars(steps, {f"return/{n}": v for n, v in means.items()})
            if means:
                reporter.scalar("train/mean_return", steps, float(np.mean(list(means.values()))))
            reporter.scalars(
                steps,
                {
                    "ppo/approx_kl": st["approx_kl"],
                    "ppo/clipfrac": st["clipfrac"],
                    "ppo/entropy": st["entropy"],
                    "speed/env_steps_per_s": st["rollout_sps"],
                    "speed/update_samples_per_s": st["update_sps"],
                },
            )
        state["last"] = {**st, "means": means}
        frac = steps / cfg.steps
        reporter.progress(span[0] + (span[1] - span[0]) * frac, f"{tag}: {steps}/{cfg.steps} env steps")
        return reporter.should_stop()

    ppo_train(env, policy, len(train_names), cfg.steps, pcfg, seed=cfg.seed, callback=callback)
    last = state["last"]
    info = {
        "train_robots": len(train_names),
        "params": n_params(policy),
        "seconds": time.perf_counter() - t0,
        "final_mean_return": float(np.mean(list(last["means"].values()))) if last.get("means") else 0.0,
        "env_steps_per_s": last.get("rollout_sps", 0.0),
        "update_samples_per_s": last.get("update_sps", 0.0),
    }
    return policy, info


def ckpt_path(reporter: Reporter, cfg: TrainConfig) -> Path:
    return Path(reporter.data_dir) / "modular_control" / "ckpt" / f"{cfg.key()}.pt"


def load_or_train(cfg: TrainConfig, reporter: Reporter, span: tuple[float, float]) -> Policy:
    """Load the cached checkpoint of ``cfg`` or train (and cache) it."""
    path = ckpt_path(reporter, cfg)
    if path.exists():
        blob = torch.load(path, map_location="cpu", weights_only=False)
        policy = build_policy(TrainConfig(**blob["config"]))
        policy.load_state_dict(blob["state"])
        reporter.log(f"loaded checkpoint {path.name}")
        return policy
    reporter.log(f"training {cfg.arch} (seed {cfg.seed}, {cfg.steps} steps) for the cache: {path.name}")
    policy, info = train_policy(cfg, reporter, span, live=False)
    if not reporter.should_stop():
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"config": asdict(cfg), "state": policy.state_dict(), "info": info}, path)
    return policy


# -- evaluation ----------------------------------------------------------------------------------
@torch.no_grad()
def evaluate(
    policy: Policy | None,
    names: list[str],
    dynamics: DynamicsRange,
    kinematics: KinematicsRange | None = None,
    eval_len: int = 200,
    reps: int = 1,
    seed: int = 0,
    record: int = -1,
) -> tuple[np.ndarray, list[dict[str, list]]]:
    """First-episode return of every robot (mean over ``reps``), deterministic actions μ; ``None`` = random policy.

    ``record`` ≥ 0 records stick-figure frames of that slot.  Returns (returns per robot, frames).
    """
    S = len(names) * reps
    kinematics = kinematics or KinematicsRange()
    env = BatchEnv(names, S, seed=seed, dynamics=dynamics, kinematics=kinematics, episode_len=eval_len)
    cur = env.reset()
    rng = np.random.default_rng(seed)
    h = policy.initial_state(S) if policy is not None else None
    prev_a = np.zeros((S, env.obs.shape[1]), dtype=np.float32)
    ret, alive = np.zeros(S), np.ones(S, dtype=bool)
    first = torch.ones(1, S, dtype=torch.bool)
    frames = []
    for _ in range(eval_len):
        if record >= 0 and alive[record]:
            frames.append(env.frame(record))
        if policy is None:
            a = rng.uniform(-1, 1, prev_a.shape)
        else:
            mu, _, h, _ = policy(
                torch.as_tensor(cur["obs"])[None],
                torch.as_tensor(cur["ctx"])[None],
                torch.as_tensor(prev_a)[None],
                torch.as_tensor(cur["mask"])[None],
                h,
                first,
            )
            a = mu[0].numpy()
            first = torch.zeros(1, S, dtype=torch.bool)
        a = a * cur["act_mask"]
        out = env.step(a)
        ret += out["reward"] * alive
        alive &= ~out["done"]
        prev_a = np.clip(a, -1, 1).astype(np.float32)
        cur = out
        if not alive.any():
            break
    return ret.reshape(reps, len(names)).mean(0), frames


def cached_evaluate(
    reporter: Reporter,
    tcfg: TrainConfig,
    policy: Policy,
    names: list[str],
    dynamics: DynamicsRange,
    kinematics: KinematicsRange,
    eval_len: int,
    reps: int,
    seed: int,
) -> np.ndarray:
    """``evaluate`` with its per-robot returns cached next to the checkpoint (key: checkpoint + condition)."""
    desc = json.dumps([tcfg.key(), names, asdict(dynamics), asdict(kinematics), eval_len, reps, seed], sort_keys=True)
    path = ckpt_path(reporter, tcfg).with_suffix("") / f"eval-{hashlib.sha1(desc.encode()).hexdigest()[:12]}.json"
    if path.exists():
        return np.asarray(json.loads(path.read_text())["returns"])
    ret = evaluate(policy, names, dynamics, kinematics, eval_len, reps, seed)[0]
    if not reporter.should_stop():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"condition": json.loads(desc), "returns": ret.tolist()}))
    return ret


def stick_figure(frames: list[dict[str, list]], title: str) -> dict[str, Any]:
    """Plotly animation of a robot's limbs (x–z plane) from ``BatchEnv.frame`` snapshots."""

    def segs(f: dict[str, list]) -> tuple[list, list]:
        xs, zs = [], []
        for i, p in enumerate(f["parent"]):
            if p >= 0:
                xs += [f["x"][p], f["x"][i], None]
                zs += [f["z"][p], f["z"][i], None]
        return xs, zs

    step = max(1, len(frames) // 40)
    sel = frames[::step] or [{"x": [0], "z": [0], "parent": [-1]}]
    x0, z0 = segs(sel[0])
    allx = [x for f in sel for x in f["x"]]
    return {
        "data": [{"type": "scatter", "x": x0, "y": z0, "mode": "lines+markers", "name": title}],
        "frames": [{"name": str(i), "data": [{"x": segs(f)[0], "y": segs(f)[1]}]} for i, f in enumerate(sel)],
        "layout": {
            "title": title,
            "xaxis": {"title": "x (m)", "range": [min(allx) - 0.5, max(allx) + 0.5]},
            "yaxis": {"title": "z (m)", "range": [0, 2.5], "scaleanchor": "x"},
            "updatemenus": [{"type": "buttons", "buttons": [{"label": "play", "method": "animate", "args": [None]}]}],
        },
    }


# -- E1 ----------------------------------------------------------------------------------------------
def train(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E1: train one architecture on the training robots of the chosen families, live curves per robot."""
    cfg = TrainConfig.from_params(params)
    train_names, test_names = split_names(FAMILY_SETS[cfg.families], cfg.split_seed)
    reporter.table(
        "split",
        [{"robot": n, "split": "train"} for n in train_names] + [{"robot": n, "split": "held out"} for n in test_names],
    )
    policy, info = train_policy(cfg, reporter, (0.0, 0.9))
    path = ckpt_path(reporter, cfg)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"config": asdict(cfg), "state": policy.state_dict(), "info": info}, path)
    ret, frames = evaluate(policy, train_names[:1], DynamicsRange(), eval_len=min(cfg.episode_len, 200), record=0)
    reporter.figure("frames", stick_figure(frames, f"{train_names[0]}: {ARCH_LABEL[cfg.arch]} (return {ret[0]:.0f})"))
    reporter.table("train_summary", [{"quantity": k, "value": v} for k, v in info.items()])
    reporter.log(
        "A short default run shows rising returns, not gaits; no ranking of architectures is claimed at this budget."
    )
    reporter.progress(1.0, "done")
    return {k: float(v) for k, v in info.items()}


# -- E2 ----------------------------------------------------------------------------------------------
def _conditions(cfg: ZeroShotConfig, train_names: list[str], test_names: list[str]) -> dict[str, tuple]:
    """Condition name → (robots, dynamics, kinematics)."""
    conds: dict[str, tuple] = {"in-distribution": (train_names, DynamicsRange(), KinematicsRange())}
    if cfg.axis in ("dynamics", "all"):
        conds["dynamics OOD"] = (train_names, DynamicsRange(ood=True), KinematicsRange())
        for s in cfg.scale_grid:
            conds[f"dyn ×{s:g}"] = (train_names, DynamicsRange(fixed=s), KinematicsRange())
    if cfg.axis in ("kinematics", "all"):
        conds["kinematics ×0.7"] = (train_names, DynamicsRange(), KinematicsRange(fixed=0.7))
        conds["kinematics ×1.3"] = (train_names, DynamicsRange(), KinematicsRange(fixed=1.3))
    if cfg.axis in ("topology", "all"):
        conds["held-out XMLs"] = (test_names, DynamicsRange(), KinematicsRange())
    return conds


def normalise(raw: dict, rand: dict, archs: list[str], conds: list[str], names_of: dict[str, list[str]]) -> dict:
    """Normalised return (R − R_rand)/(R_ref − R_rand) per robot, averaged over robots, for each arch/seed/cond.

    R_ref = that robot's best in-distribution return across architectures (mean over seeds); for held-out XMLs,
    which have no in-distribution return, its best held-out return across architectures (design).
    The denominator is floored at 1 + 0.1·|R_rand| (design): where no architecture beats the random policy on a
    robot (short budgets), the ratio would otherwise explode.
    ``raw[arch][seed][cond]`` and ``rand[cond]`` are per-robot arrays.
    """
    seeds = list(next(iter(raw.values())).keys())
    ref: dict[str, np.ndarray] = {}
    base = "in-distribution"
    ref_id = np.max([np.mean([raw[a][s][base] for s in seeds], 0) for a in archs], 0)
    for c in conds:
        if names_of[c] is names_of[base] or names_of[c] == names_of[base]:
            ref[c] = ref_id
        else:
            ref[c] = np.max([np.mean([raw[a][s][c] for s in seeds], 0) for a in archs], 0)
    out: dict = {}
    for a in archs:
        out[a] = {}
        for s in seeds:
            out[a][s] = {}
            for c in conds:
                denom = np.maximum(ref[c] - rand[c], 1.0 + 0.1 * np.abs(rand[c]))  # floor: see docstring
                out[a][s][c] = float(np.mean((raw[a][s][c] - rand[c]) / denom))
    return out


def zero_shot(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E2: normalised zero-shot return of each architecture on unseen dynamics, kinematics and topologies."""
    cfg = ZeroShotConfig.from_params(params)
    archs = ARCH_SETS[cfg.archs]
    train_names, test_names = split_names(FAMILY_SETS[cfg.families], cfg.split_seed)
    conds = _conditions(cfg, train_names, test_names)
    names_of = {c: v[0] for c, v in conds.items()}
    seeds = [cfg.seed + i for i in range(cfg.n_seeds)]
    n_jobs = len(archs) * len(seeds)
    raw: dict = {a: {} for a in archs}
    job = 0
    for a in archs:
        for s in seeds:
            span = (job / n_jobs * 0.9, (job + 0.7) / n_jobs * 0.9)
            tcfg = TrainConfig(
                families=cfg.families,
                split_seed=cfg.split_seed,
                arch=a,
                steps=cfg.train_steps,
                seed=s,
                n_slots=cfg.n_slots,
            )
            policy = load_or_train(tcfg, reporter, span)
            if reporter.should_stop():
                return {"cancelled": True}
            reporter.progress((job + 0.7) / n_jobs * 0.9, f"evaluating {ARCH_LABEL[a]} seed {s}")
            raw[a][s] = {
                c: cached_evaluate(reporter, tcfg, policy, r, dyn, kin, cfg.eval_len, cfg.eval_reps, 1000 + s)
                for c, (r, dyn, kin) in conds.items()
            }
            job += 1
    rand = {
        c: evaluate(None, r, dyn, kin, cfg.eval_len, cfg.eval_reps, seed=999)[0] for c, (r, dyn, kin) in conds.items()
    }
    norm = normalise(raw, rand, archs, list(conds), names_of)
    headline = [c for c in conds if not c.startswith("dyn ×")]
    rows = []
    for a in archs:
        row: dict[str, Any] = {"architecture": ARCH_LABEL[a]}
        for c in headline:
            v = [norm[a][s][c] for s in seeds]
            row[c] = f"{np.mean(v):.3f} ± {np.std(v):.3f}"
        rows.append(row)
    reporter.table("zero_shot", rows)
    raw_rows = [
        {
            "architecture": ARCH_LABEL[a],
            "condition": c,
            "mean raw return": float(np.mean([raw[a][s][c].mean() for s in seeds])),
        }
        for a in archs
        for c in headline
    ] + [{"architecture": "random", "condition": c, "mean raw return": float(rand[c].mean())} for c in headline]
    reporter.table("raw_returns", raw_rows)
    # normalised return against dynamics scale, and slope against |log scale|
    slopes = []
    grid = [c for c in conds if c.startswith("dyn ×")]
    for a in archs:
        ys = [float(np.mean([norm[a][s][c] for s in seeds])) for c in grid]
        reporter.series(f"dyn_scale/{ARCH_LABEL[a]}", list(cfg.scale_grid), ys)
        if len(grid) >= 2:
            x = np.abs(np.log(np.asarray(cfg.scale_grid)))
            slope = float(np.polyfit(x, ys, 1)[0]) if np.ptp(x) > 0 else 0.0
            slopes.append({"architecture": ARCH_LABEL[a], "slope vs |log scale|": slope})
    reporter.table("slopes", slopes or [{"architecture": "-", "slope vs |log scale|": 0.0}])
    # morphology × architecture heatmap on the out-of-distribution conditions
    ood = [c for c in headline if c != "in-distribution"] or ["in-distribution"]
    robots, z = [], []
    for c in ood:
        for i, n in enumerate(names_of[c]):
            robots.append(f"{n} [{c}]")
            z.append([float(np.mean([raw[a][s][c][i] for s in seeds])) for a in archs])
    reporter.figure(
        "heatmap",
        {
            "data": [
                {"type": "heatmap", "z": z, "x": [ARCH_LABEL[a] for a in archs], "y": robots, "colorscale": "Viridis"}
            ],
            "layout": {"title": "zero-shot raw return (mean over seeds)", "margin": {"l": 260}},
        },
    )
    # frames of ModRec (or the last architecture) on a held-out robot
    show = "modrec" if "modrec" in archs else archs[-1]
    target = test_names[:1] or train_names[:1]
    tcfg = TrainConfig(
        families=cfg.families,
        split_seed=cfg.split_seed,
        arch=show,
        steps=cfg.train_steps,
        seed=seeds[0],
        n_slots=cfg.n_slots,
    )
    pol = load_or_train(tcfg, reporter, (0.9, 0.95))
    r, frames = evaluate(pol, target, DynamicsRange(ood=True), eval_len=cfg.eval_len, record=0)
    reporter.figure("frames", stick_figure(frames, f"{target[0]} (unseen), {ARCH_LABEL[show]}: return {r[0]:.0f}"))
    reporter.progress(1.0, "done")
    summary: dict[str, Any] = {"train_steps": cfg.train_steps, "n_seeds": cfg.n_seeds}
    for a in archs:
        for c in headline:
            summary[f"{a}/{c}"] = float(np.mean([norm[a][s][c] for s in seeds]))
    return summary


# -- E3 ----------------------------------------------------------------------------------------------
@torch.no_grad()
def rollout_features(policy: Policy, names: list[str], cfg: ProbeConfig, seed: int) -> tuple[np.ndarray, ...]:
    """Per-limb features (T, S, N, d), log damping factors (S, N), actuated-limb mask (S, N), alive (T, S)."""
    dyn = DynamicsRange(
        lo=min(cfg.damping_range), hi=max(cfg.damping_range), fields=(True, False, False), log_uniform=True
    )
    env = BatchEnv(names, cfg.episodes, seed=seed, dynamics=dyn, episode_len=cfg.horizon + 1)
    cur = env.reset()
    target = np.log(env.dyn_scales[:, :, 0]).copy()
    act = env.act_mask.copy()
    S = cfg.episodes
    h = policy.initial_state(S)
    prev_a = np.zeros((S, env.obs.shape[1]), dtype=np.float32)
    feats, alive_t = [], []
    alive = np.ones(S, dtype=bool)
    first = torch.ones(1, S, dtype=torch.bool)
    for _ in range(cfg.horizon):
        mu, _, h, z = policy(
            torch.as_tensor(cur["obs"])[None],
            torch.as_tensor(cur["ctx"])[None],
            torch.as_tensor(prev_a)[None],
            torch.as_tensor(cur["mask"])[None],
            h,
            first,
        )
        first = torch.zeros(1, S, dtype=torch.bool)
        feats.append(z[0].numpy())
        alive_t.append(alive.copy())
        a = mu[0].numpy() * cur["act_mask"]
        out = env.step(a)
        alive &= ~out["done"]
        prev_a = np.clip(a, -1, 1).astype(np.float32)
        cur = out
    return np.stack(feats), target, act, np.stack(alive_t)


def context_probe(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E3: ridge probe R²(t) of the hidden per-limb log-damping factor from ModRec's h^i_t vs MetaMorph's tokens."""
    cfg = ProbeConfig.from_params(params)
    train_names, _ = split_names(FAMILY_SETS[cfg.families], cfg.split_seed)
    out: dict[str, Any] = {}
    rows = []
    for j, arch in enumerate(("modrec", "metamorph")):
        tcfg = TrainConfig(
            families=cfg.families,
            split_seed=cfg.split_seed,
            arch=arch,
            steps=cfg.train_steps,
            seed=cfg.seed,
            n_slots=cfg.n_slots,
        )
        policy = load_or_train(tcfg, reporter, (0.45 * j, 0.45 * j + 0.35))
        if reporter.should_stop():
            return {"cancelled": True}
        reporter.progress(0.45 * j + 0.35, f"probing {ARCH_LABEL[arch]}")
        feats, target, act, alive = rollout_features(policy, train_names, cfg, seed=2000 + cfg.seed)
        half = cfg.episodes // 2
        r2 = []
        for t in range(cfg.horizon):
            ok = act & alive[t][:, None]
            tr, te = ok.copy(), ok.copy()
            tr[half:], te[:half] = False, False
            r2.append(ridge_r2(feats[t][tr], target[tr], feats[t][te], target[te], cfg.ridge))
        reporter.series(f"probe/{ARCH_LABEL[arch]}", list(range(cfg.horizon)), r2)
        k = min(49, cfg.horizon - 1)
        out[f"{arch}/r2_t0"] = float(r2[0])
        out[f"{arch}/r2_t{k}"] = float(r2[k])
        out[f"{arch}/r2_max"] = float(np.max(r2))
        rows.append({"architecture": ARCH_LABEL[arch], "R² at t=0": r2[0], f"R² at t={k}": r2[k], "max R²": max(r2)})
    reporter.table("probe_summary", rows)
    reporter.progress(1.0, "done")
    return out


# -- E4 ----------------------------------------------------------------------------------------------
def ablation(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """E4: ModRec with recurrence, attention and context each on/off; returns on train, dynamics OOD, held-out."""
    cfg = AblationConfig.from_params(params)
    train_names, test_names = split_names(FAMILY_SETS[cfg.families], cfg.split_seed)
    combos = [(r, a, c) for r in (True, False) for a in (True, False) for c in (True, False)]
    if cfg.subset == "recurrence":
        combos = [(True, True, True), (False, True, True)]
    rows, out = [], {}
    rand_id = evaluate(None, train_names, DynamicsRange(), eval_len=cfg.eval_len, seed=999)[0].mean()
    for i, (r, a, c) in enumerate(combos):
        tcfg = TrainConfig(
            families=cfg.families,
            split_seed=cfg.split_seed,
            arch="modrec",
            steps=cfg.train_steps,
            seed=cfg.seed,
            recurrent=r,
            attn=a,
            use_ctx=c,
            n_slots=cfg.n_slots,
        )
        k = len(combos)
        policy = load_or_train(tcfg, reporter, (i / k, (i + 0.8) / k))
        if reporter.should_stop():
            return {"cancelled": True}
        name = f"rnn {'on' if r else 'off'} / attn {'on' if a else 'off'} / ctx {'on' if c else 'off'}"
        rid = evaluate(policy, train_names, DynamicsRange(), eval_len=cfg.eval_len, seed=1000)[0].mean()
        rood = evaluate(policy, train_names, DynamicsRange(ood=True), eval_len=cfg.eval_len, seed=1000)[0].mean()
        rtop = (
            evaluate(policy, test_names, DynamicsRange(), eval_len=cfg.eval_len, seed=1000)[0].mean()
            if test_names
            else 0.0
        )
        rows.append(
            {
                "configuration": name,
                "train robots": rid,
                "dynamics OOD": rood,
                "held-out XMLs": rtop,
                "random (train)": rand_id,
            }
        )
        reporter.table("ablation", rows)
        reporter.scalar("ablation/dynamics_ood_return", i, float(rood))
        out[name] = float(rood)
    reporter.progress(1.0, "done")
    return out


__all__ = ["train", "zero_shot", "context_probe", "ablation", "evaluate", "train_policy", "replace"]

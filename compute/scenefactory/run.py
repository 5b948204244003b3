"""Entry points of the four SceneFactory experiments: ``fn(params, reporter) -> summary``."""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from compute.core.reporter import Reporter
from compute.core.runtime import resolve_device, seed_everything

from .config import DEMANDS, ThroughputConfig, TrainConfig, TransferConfig, WetConfig, scene_list
from .dynamics import step_loop
from .env import EnvConfig, VecDriveEnv
from .friction import SURFACE_NAMES, all_friction, hydroplaning_speed
from .metrics import casps, summarize_episodes
from .ppo import LateFusionActorCritic, PPOConfig, evaluate, flat, train
from .viz import heatmap, replay_figure, trajectories_figure


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


# ------------------------------------------------------------------------------------------------
# E1 — throughput
# ------------------------------------------------------------------------------------------------
def throughput(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """CASPS of the vectorised pipeline (physics + observation + reward + policy) vs the per-vehicle loop.

    The loop baseline steps min(W·A, loop_agents) vehicles one at a time with the same single-/two-track maths; its
    cost is linear in vehicles, so its CASPS is per-vehicle and the ratio is measured in the same process.  Vectorised
    and loop steps are timed alternately and the median per-step times are reported (robust to a shared machine).
    """
    cfg = ThroughputConfig.from_params(params)
    seed_everything(cfg.seed)
    device = resolve_device(cfg.device)
    model = LateFusionActorCritic(PPOConfig().hidden).to(device)
    rows: list[dict[str, Any]] = []
    grid = [(w, a) for a in cfg.agents for w in cfg.worlds]
    for i, (W, A) in enumerate(grid):
        if reporter.should_stop():
            break
        env = VecDriveEnv(EnvConfig(n_worlds=W, n_agents=A, backend=cfg.backend, max_steps=10**6), device, cfg.seed)
        env.profile = True
        loop = cfg.backend in ("single_track", "two_track")
        if loop:  # the loop baseline: same vehicles' states, random actions, same physics in scalar Python
            n_loop = min(W * A, cfg.loop_agents)
            st = env.state.flatten(0, 1)[:n_loop].double().cpu().tolist()
            acc = env.acc.flatten(0, 1)[:n_loop].double().cpu().tolist()
            act = (torch.rand(n_loop, 3) * 2 - 1).tolist()
            mus = env.mu[:, None].expand(W, A).flatten()[:n_loop].double().cpu().tolist()
            decim = max(1, round(env.cfg.dt / env.cfg.physics_dt))
        # Interleaved timing: each round times one vectorised control step, then `loop_steps` loop steps; the
        # medians over rounds are reported, so load from other processes hits both sides alike.
        per: dict[str, list[float]] = {k: [] for k in ("total", "physics", "observation", "reward", "policy", "loop")}
        for k in range(cfg.steps + 2):  # 2 warm-up rounds
            before = dict(env.timing)
            _sync(device)
            t_start = time.perf_counter()
            o = env.observe()
            _sync(device)
            t0 = time.perf_counter()
            a = model.act(flat(o)).view(W, A, 3)
            _sync(device)
            t_pol = time.perf_counter() - t0
            env.step(a)
            _sync(device)
            total = time.perf_counter() - t_start
            if loop:
                t0 = time.perf_counter()
                for _ in range(cfg.loop_steps):
                    for _ in range(decim):
                        st, acc = step_loop(
                            st, acc, act, mus, env.p, cfg.backend == "two_track", env.cfg.physics_dt, env.cfg.substeps
                        )
                t_loop = (time.perf_counter() - t0) / cfg.loop_steps
            if k < 2:
                continue
            per["total"].append(total)
            per["policy"].append(t_pol)
            for key in ("physics", "observation", "reward"):
                per[key].append(env.timing[key] - before[key])
            if loop:
                per["loop"].append(t_loop)
        med = {key: statistics.median(v) for key, v in per.items() if v}
        n_sp = env.n_spawned
        vec = casps(1, n_sp, med["total"])
        vec_phys = casps(1, n_sp, med["physics"])
        row: dict[str, Any] = {
            "config": f"{W}x{A}",
            "worlds": W,
            "agents_per_world": A,
            "agents": n_sp,
            "casps_vectorised": vec,
            "casps_vectorised_physics": vec_phys,
            "physics_ms": 1000 * med["physics"],
            "observation_ms": 1000 * med["observation"],
            "reward_ms": 1000 * med["reward"],
            "policy_ms": 1000 * med["policy"],
        }
        if loop:
            lp = casps(1, n_loop, med["loop"])
            row.update({"casps_loop": lp, "speedup": vec / lp, "speedup_physics": vec_phys / lp})
        rows.append(row)
        step = W * A
        reporter.scalar("casps/vectorised", step, vec)
        reporter.scalar("casps/vectorised_physics", step, vec_phys)
        if "casps_loop" in row:
            reporter.scalar("casps/loop", step, row["casps_loop"])
            reporter.scalar("speedup/vectorised_over_loop", step, row["speedup"])
        reporter.table("throughput", rows)
        reporter.progress((i + 1) / len(grid), f"{W}×{A}: {vec:,.0f} CASPS")
    fig = {
        "data": [],
        "layout": {
            "title": f"CASPS vs agents ({device}; this machine, not comparable to PhysX)",
            "xaxis": {"type": "log", "title": "controlled agents W·A"},
            "yaxis": {"type": "log", "title": "CASPS"},
        },
    }
    for a in cfg.agents:
        rs = [r for r in rows if r["agents_per_world"] == a]
        fig["data"].append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"vectorised, {a}/world",
                "x": [r["worlds"] * a for r in rs],
                "y": [r["casps_vectorised"] for r in rs],
            }
        )
    loop_rows = [r for r in rows if "casps_loop" in r]
    if loop_rows:
        fig["data"].append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "per-vehicle loop",
                "x": [r["worlds"] * r["agents_per_world"] for r in loop_rows],
                "y": [r["casps_loop"] for r in loop_rows],
            }
        )
    reporter.figure("casps_loglog", fig)
    best = max(rows, key=lambda r: r["worlds"] * r["agents_per_world"]) if rows else {}
    return {
        "device": device,
        "largest_config": best.get("config"),
        "casps_vectorised": best.get("casps_vectorised"),
        "casps_loop": best.get("casps_loop"),
        "speedup": best.get("speedup"),
        "speedup_physics": best.get("speedup_physics"),
        "note": "CASPS are this machine's numbers (torch), not comparable to PhysX; the ratio is the paper's analogue",
    }


# ------------------------------------------------------------------------------------------------
# shared training helpers
# ------------------------------------------------------------------------------------------------
def _env_cfg(n_worlds: int, n_agents: int, scenes: str, max_steps: int, demand: str = "normal", **kw: Any) -> EnvConfig:
    if demand not in DEMANDS:
        raise ValueError(f"unknown demand {demand!r}; one of {sorted(DEMANDS)}")
    return EnvConfig(
        n_worlds=n_worlds, n_agents=n_agents, scenes=scene_list(scenes), max_steps=max_steps, **DEMANDS[demand], **kw
    )


def _report_iter(reporter: Reporter, prefix: str, it: int, s: dict[str, float]) -> None:
    vals = {
        f"{prefix}train/reward_per_step": s["reward_per_step"],
        f"{prefix}ppo/approx_kl": s["approx_kl"],
        f"{prefix}ppo/lr": s["lr"],
        f"{prefix}ppo/clipfrac": s["clipfrac"],
        f"{prefix}ppo/std": s["std"],
        f"{prefix}speed/casps": s["casps"],
    }
    if s.get("ep_episodes", 0):
        vals.update(
            {
                f"{prefix}rates/success": s["ep_success"],
                f"{prefix}rates/collision": s["ep_collision"],
                f"{prefix}rates/offroad": s["ep_offroad"],
                f"{prefix}safety/mean_peak_drac": s["ep_mean_peak_drac"],
                f"{prefix}safety/high_drac_rate": s["ep_high_drac_rate"],
                f"{prefix}safety/min_ttc_median": s["ep_min_ttc_median"],
                f"{prefix}train/episode_return": s["ep_return"],
            }
        )
    reporter.scalars(it, vals)


def _train_policy(
    env_cfg: EnvConfig,
    ppo_cfg: PPOConfig,
    device: str,
    seed: int,
    reporter: Reporter,
    prefix: str,
    progress: tuple[float, float],
    label: str,
    cache: Path | None = None,
) -> LateFusionActorCritic:
    """Train (or load from ``cache``) one shared policy, streaming curves under ``prefix``."""
    if cache is not None and cache.exists():
        model = LateFusionActorCritic(ppo_cfg.hidden)
        model.load_state_dict(torch.load(cache, map_location="cpu", weights_only=True))
        reporter.log(f"{label}: loaded cached policy {cache.name}")
        return model.to(device)
    torch.manual_seed(seed)
    env = VecDriveEnv(env_cfg, device, seed)
    lo, hi = progress

    def on_iter(it: int, s: dict[str, float]) -> bool:
        _report_iter(reporter, prefix, it, s)
        reporter.progress(
            lo + (hi - lo) * (it + 1) / ppo_cfg.iterations, f"{label}: iteration {it + 1}/{ppo_cfg.iterations}"
        )
        return reporter.should_stop()

    model = train(env, ppo_cfg, on_iter=on_iter)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), cache)
    return model


def _cache_path(reporter: Reporter, use: bool, tag: str, payload: dict[str, Any]) -> Path | None:
    if not use:
        return None
    key = hashlib.sha1(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return Path(reporter.data_dir) / "scenefactory" / f"{tag}-{key}.pt"


@torch.no_grad()
def _rollout_world(
    env: VecDriveEnv, model: LateFusionActorCritic, world: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Deterministic episode of one world (all worlds step; world ``world`` is recorded until it resets)."""
    env.reset_worlds(torch.arange(env.cfg.n_worlds, device=env.device))
    route = env.route[world].cpu().clone()
    traj, alive = [env.state[world, :, :3].cpu().clone()], [(~env.parked[world]).cpu().clone()]
    for _ in range(env.cfg.max_steps):
        a = model.act(flat(env.observe()), deterministic=True).view(env.cfg.n_worlds, env.cfg.n_agents, 3)
        t_before = int(env.t[world])
        env.step(a)
        if int(env.t[world]) <= t_before:  # the world reset: episode over
            break
        traj.append(env.state[world, :, :3].cpu().clone())
        alive.append((~env.parked[world]).cpu().clone())
    env.pop_finished()
    return route, torch.stack(traj), torch.stack(alive)


# ------------------------------------------------------------------------------------------------
# E2 — PPO goal reaching
# ------------------------------------------------------------------------------------------------
def ppo_goal(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Train one shared PPO policy on batched worlds; stream success/collision/DRAC; evaluate; replay one episode."""
    cfg = TrainConfig.from_params(params)
    seed_everything(cfg.seed)
    device = resolve_device(cfg.device)
    ecfg = _env_cfg(
        cfg.n_worlds,
        cfg.n_agents,
        cfg.scenes,
        cfg.max_steps,
        cfg.demand,
        backend=cfg.backend,
        wet_fraction=cfg.wet_fraction,
        film_mm=(cfg.film_mm,),
        surface=cfg.surface,
        weather_token=cfg.weather_token,
    )
    pcfg = PPOConfig(iterations=cfg.iterations, steps=cfg.steps)
    reporter.log(f"PPO config: {asdict(pcfg)}")
    model = _train_policy(ecfg, pcfg, device, cfg.seed, reporter, "", (0.0, 0.9), "PPO")
    env = VecDriveEnv(ecfg, device, cfg.seed + 1000)
    ev = summarize_episodes(evaluate(env, model, cfg.eval_episodes))
    reporter.table("eval", [{"policy": "trained (deterministic)", **ev}])
    if cfg.replay:
        route, traj, alive = _rollout_world(env, model)
        reporter.figure(
            "replay", replay_figure(route, traj, alive, "top-down replay, world 0 (blue: driving, grey: parked)")
        )
    reporter.progress(1.0, "done")
    return {f"eval_{k}": v for k, v in ev.items()}


# ------------------------------------------------------------------------------------------------
# E3 — cross-simulator transfer
# ------------------------------------------------------------------------------------------------
def transfer(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """Train on physics and on a kinematic bicycle; evaluate both on both (2×2 success table)."""
    cfg = TransferConfig.from_params(params)
    seed_everything(cfg.seed)
    device = resolve_device(cfg.device)
    backends = {"physics": "single_track", "kinematic": cfg.kinematic_backend}
    wet: dict[str, Any] = {"wet_fraction": 1.0 if cfg.film_mm > 0 else 0.0, "film_mm": (cfg.film_mm,)}
    pcfg = PPOConfig(iterations=cfg.iterations, steps=cfg.steps)
    models = {}
    for i, (name, be) in enumerate(backends.items()):
        ecfg = _env_cfg(cfg.n_worlds, cfg.n_agents, cfg.scenes, cfg.max_steps, cfg.demand, backend=be, **wet)
        cache = _cache_path(
            reporter, cfg.use_cache, f"transfer-{name}", {"env": asdict(ecfg), "ppo": asdict(pcfg), "seed": cfg.seed}
        )
        models[name] = _train_policy(
            ecfg,
            pcfg,
            device,
            cfg.seed + i,
            reporter,
            f"{name}/",
            (0.45 * i, 0.45 * (i + 1)),
            f"train on {name}",
            cache,
        )
    rows, z = [], []
    for tr in backends:
        zr = []
        for ev_name, be in backends.items():
            env = VecDriveEnv(
                _env_cfg(cfg.n_worlds, cfg.n_agents, cfg.scenes, cfg.max_steps, cfg.demand, backend=be, **wet),
                device,
                cfg.seed + 777,
            )
            m = summarize_episodes(evaluate(env, models[tr], cfg.eval_episodes))
            rows.append({"trained_on": tr, "evaluated_on": ev_name, "pair": f"{tr}→{ev_name}", **m})
            zr.append(m.get("success", 0.0))
        z.append(zr)
    reporter.table("transfer", rows)
    reporter.figure(
        "success_heatmap",
        heatmap(z, list(backends), list(backends), "success rate: trained on (rows) → evaluated on (columns)"),
    )
    env = VecDriveEnv(
        _env_cfg(cfg.n_worlds, cfg.n_agents, cfg.scenes, cfg.max_steps, cfg.demand, backend="single_track", **wet),
        device,
        cfg.seed + 999,
    )
    trajs = {}
    for name, m in models.items():
        env.rng = __import__("numpy").random.default_rng(cfg.seed + 5)
        route, traj, _ = _rollout_world(env, m)
        trajs[f"{name}-trained"] = traj
    reporter.figure("trajectories", trajectories_figure(route, trajs, "same scene on the physics backend"))
    reporter.progress(1.0, "done")
    s = {f"{r['trained_on']}_to_{r['evaluated_on']}": r.get("success", 0.0) for r in rows}
    for r in rows:  # why episodes failed, and how close to the grip limit the policy drove
        for k in ("collision", "offroad", "mean_peak_drac", "mean_speed", "peak_grip_median", "over_grip_rate"):
            if k in r:
                s[f"{r['trained_on']}_to_{r['evaluated_on']}_{k}"] = r[k]
    s["gap_physics_trained"] = s["physics_to_physics"] - s["physics_to_kinematic"]
    s["gap_kinematic_trained"] = s["kinematic_to_kinematic"] - s["kinematic_to_physics"]
    return s


def _hydro_kmh(h_mm: float) -> float | None:
    """Hydroplaning speed [km/h] of the ALL model, None when dry or beyond 300 km/h (no practical μ → 0)."""
    v = hydroplaning_speed(h_mm) * 3.6 if h_mm > 0 else None
    return v if v is not None and v < 300 else None


# ------------------------------------------------------------------------------------------------
# E4 — wet road
# ------------------------------------------------------------------------------------------------
def wet_road(params: dict[str, Any], reporter: Reporter) -> dict[str, Any]:
    """μ(h_w, v, surface) curves; friction-aware vs -blind policies at several film depths (success, DRAC)."""
    cfg = WetConfig.from_params(params)
    seed_everything(cfg.seed)
    device = resolve_device(cfg.device)
    kmh = torch.linspace(10, 130, 49, dtype=torch.float64)
    for h in cfg.depths:
        for surf in SURFACE_NAMES if cfg.surface == "mixed" else [cfg.surface]:
            mu = all_friction(kmh / 3.6, h, surf)
            reporter.series(f"mu/{surf}_{h:g}mm", kmh.tolist(), mu.tolist())
    reporter.table(
        "friction",
        [
            {
                "film_mm": h,
                "mu_50kmh_AC": float(all_friction(13.89, h, "AC")),
                "hydroplaning_kmh": _hydro_kmh(h),
            }
            for h in cfg.depths
        ],
    )
    pcfg = PPOConfig(iterations=cfg.iterations, steps=cfg.steps)
    models = {}
    for i, (name, aware) in enumerate((("aware", True), ("blind", False))):
        ecfg = _env_cfg(
            cfg.n_worlds,
            cfg.n_agents,
            cfg.scenes,
            cfg.max_steps,
            cfg.demand,
            wet_fraction=cfg.wet_fraction,
            film_mm=cfg.train_films,
            surface=cfg.surface,
            weather_token=aware,
        )
        cache = _cache_path(
            reporter, cfg.use_cache, f"wet-{name}", {"env": asdict(ecfg), "ppo": asdict(pcfg), "seed": cfg.seed}
        )
        models[name] = _train_policy(
            ecfg, pcfg, device, cfg.seed, reporter, f"{name}/", (0.4 * i, 0.4 * (i + 1)), f"train {name}", cache
        )
    rows = []
    for j, h in enumerate(cfg.depths):
        for name, aware in (("aware", True), ("blind", False)):
            ecfg = _env_cfg(
                cfg.n_worlds,
                cfg.n_agents,
                cfg.scenes,
                cfg.max_steps,
                cfg.demand,
                wet_fraction=1.0 if h > 0 else 0.0,
                film_mm=(h,),
                surface=cfg.surface,
                weather_token=aware,
            )
            env = VecDriveEnv(ecfg, device, cfg.seed + 500 + j)  # same scenes for both policies
            m = summarize_episodes(evaluate(env, models[name], cfg.eval_episodes))
            rows.append({"film_mm": h, "policy": name, "case": f"{h:g} mm {name}", "mu": float(env.mu[0]), **m})
        reporter.progress(0.8 + 0.2 * (j + 1) / len(cfg.depths), f"evaluated h_w = {h:g} mm")
    reporter.table("wet", rows)
    summary: dict[str, Any] = {}
    for h in cfg.depths:
        a = next(r for r in rows if r["film_mm"] == h and r["policy"] == "aware")
        b = next(r for r in rows if r["film_mm"] == h and r["policy"] == "blind")
        ratio = a["mean_peak_drac"] / b["mean_peak_drac"] if b.get("mean_peak_drac") else None
        summary[f"drac_ratio_{h:g}mm"] = ratio
        summary[f"aware_drac_{h:g}mm"], summary[f"blind_drac_{h:g}mm"] = a["mean_peak_drac"], b["mean_peak_drac"]
        summary[f"aware_success_{h:g}mm"], summary[f"blind_success_{h:g}mm"] = a["success"], b["success"]
        summary[f"aware_high_drac_{h:g}mm"], summary[f"blind_high_drac_{h:g}mm"] = (
            a["high_drac_rate"],
            b["high_drac_rate"],
        )
        for k in ("collision", "offroad", "mean_speed", "peak_grip_median"):
            if k in a and k in b:
                summary[f"aware_{k}_{h:g}mm"], summary[f"blind_{k}_{h:g}mm"] = a[k], b[k]
    return summary

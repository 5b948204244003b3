"""Does a friction-aware policy use its weather token?  Evaluate one trained aware policy on the same wet worlds with
its token showing the true film, showing "dry" (h_w = 0, same surface), or masked (all zeros).

    PYTHONPATH=. .venv/bin/python bench/scenefactory_token_counterfactual.py POLICY.pt --demand anticipate --seed 0 \
        --episodes 1024 --films 5 12 --tokens true dry

POLICY.pt is a cached `wet-aware-*.pt` from `run.wet_road(..., use_cache=True)` (under <data_dir>/scenefactory/).  The
evaluation worlds are those of `wet_road` for the same seed (seed + 500 + index of the film in (0, 0.5, 5, 12)).
"""

from __future__ import annotations

import argparse

import torch

import compute.scenefactory.obs as obs
from compute.scenefactory.env import VecDriveEnv
from compute.scenefactory.metrics import summarize_episodes
from compute.scenefactory.ppo import LateFusionActorCritic, evaluate
from compute.scenefactory.run import _env_cfg

DEPTHS = (0.0, 0.5, 5.0, 12.0)
KEYS = ("success", "collision", "offroad", "mean_peak_drac", "high_drac_rate", "mean_speed")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("policy")
    ap.add_argument("--demand", default="anticipate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--episodes", type=int, default=1024)
    ap.add_argument("--films", type=float, nargs="+", default=[5.0, 12.0])
    ap.add_argument("--tokens", nargs="+", default=["true", "dry"], choices=["true", "dry", "masked"])
    ap.add_argument("--worlds", type=int, default=64)
    ap.add_argument("--agents", type=int, default=8)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = LateFusionActorCritic(64)
    model.load_state_dict(torch.load(args.policy, map_location="cpu", weights_only=True))
    orig = obs.weather_token
    mode = ["true"]
    obs.weather_token = lambda h, s, aware: orig(h * 0 if mode[0] == "dry" else h, s, aware and mode[0] != "masked")
    for h in args.films:
        j = DEPTHS.index(h)
        for tok in args.tokens:
            mode[0] = tok
            ecfg = _env_cfg(
                args.worlds, args.agents, "mix", 120, args.demand, wet_fraction=1.0 if h > 0 else 0.0, film_mm=(h,)
            )
            env = VecDriveEnv(ecfg, "cpu", args.seed + 500 + j)
            s = summarize_episodes(evaluate(env, model, args.episodes))
            print(f"seed {args.seed} {h:>4} mm token={tok:6s} " + " ".join(f"{k}={s[k]:.3f}" for k in KEYS), flush=True)


if __name__ == "__main__":
    main()

"""Is the hidden tier linearly readable from the trunk's features at the route position?  A linear probe per layer.

    PYTHONPATH=. .venv/bin/python bench/steer_route_probe.py PARAMS_JSON [--n 4000] [--policy NAME]

Loads the SFT checkpoint of PARAMS_JSON (the ``bench/steer_rl.py`` base parameters; built if missing) or a saved
policy, takes the first ``n`` held-out scenes of seed 0's stream, and collects each block's output at the last prompt
position (where the route token is read) and the final normed features (what ``route_detach`` reads the route from).
On each it fits an L2-regularised logistic regression (features standardised on the fitting half; L-BFGS) on half
the scenes and reports held-out accuracy on the other half for two labels: hard vs not, and the three tiers, beside
the majority class.  For the final normed features it prints how their squared norm splits: the squared norm of
their mean, the total variance around it, and the part of that variance between the tiers' means.  With
``--readout-steps N`` it also fits the route readout itself to the hard label (``readout_fit``): the best case for
a route learned on these features at the RL learning rate, tied rows against a separate centred head.  It also
prints the policy's own route belief p_c per tier and its Spearman with the tier.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import torch

from compute.core.lm.sampling import left_pad
from compute.core.tasks.base import split_rng
from compute.steer.config import SteerConfig
from compute.steer.evaluate import route_probs, spearman
from compute.steer.inspector import load_policy
from compute.steer.plugin import route_features
from compute.steer.scenes import TIERS
from compute.steer.sft import load_or_build
from compute.steer.traces import DIRECT, THINK


def features(model, prompts: list[list[int]], batch: int = 256) -> list[np.ndarray]:
    """``route_features`` of every prompt, in batches: [block outputs …, final normed features], each [N, d]."""
    out = [
        route_features(model, *left_pad(prompts[i : i + batch], 0, model.device)) for i in range(0, len(prompts), batch)
    ]
    return [torch.cat([o[j] for o in out]).float().numpy() for j in range(len(out[0]))]


def probe(x: np.ndarray, y: np.ndarray, l2: float = 1e-2) -> float:
    """Held-out accuracy of a multinomial logistic regression fitted on the first half, tested on the second."""
    h = len(y) // 2
    mu, sd = x[:h].mean(0), x[:h].std(0) + 1e-6
    xt = torch.tensor((x - mu) / sd, dtype=torch.float64)
    yt = torch.tensor(y)
    k = int(y.max()) + 1
    w = torch.zeros(x.shape[1], k, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(k, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=500, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(xt[:h] @ w + b, yt[:h]) + l2 * (w * w).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        return float(((xt[h:] @ w + b).argmax(-1) == yt[h:]).double().mean())


def readout_fit(f: np.ndarray, y: np.ndarray, w_think: np.ndarray, w_direct: np.ndarray, steps: int, lr: float):
    """Best case for a route read out linearly: the hard label as a supervised target, full batch, Adam (β 0.9,
    0.99, as the RL trainer) from the SFT's route readout, on the first half; yields (readout, step, held-out
    accuracy of z > 0 → <think> against hard, mean p_c per tier) at steps 0, steps/3 and steps.

    ``tied``: z = (w_think − w_direct)·f, both rows trained (what ``route_detach`` moves);  ``centred``: a separate
    head z = u·(f − μ) + c with u, c started at the same z, μ the fitting half's mean."""
    h = len(y) // 2
    ft = torch.tensor(f, dtype=torch.float64)
    yt = torch.tensor(y, dtype=torch.float64)
    mu = ft[:h].mean(0)
    for kind in ("tied", "centred"):
        if kind == "tied":
            wt = torch.tensor(w_think, dtype=torch.float64, requires_grad=True)
            wd = torch.tensor(w_direct, dtype=torch.float64, requires_grad=True)
            params = [wt, wd]

            def z_of(x, wt=wt, wd=wd):
                return x @ (wt - wd)
        else:
            u = torch.tensor(w_think - w_direct, dtype=torch.float64, requires_grad=True)
            c = (mu @ u).detach().clone().requires_grad_(True)
            params = [u, c]

            def z_of(x, u=u, c=c):
                return (x - mu) @ u + c

        opt = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.99))
        for step in range(steps + 1):
            if step in (0, steps // 3, steps):
                with torch.no_grad():
                    z = z_of(ft[h:])
                    acc = float(((z > 0).double() == yt[h:]).double().mean())
                    pc = torch.sigmoid(z).numpy()
                yield kind, step, acc, pc
            if step == steps:
                break
            opt.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(z_of(ft[:h]), yt[:h])
            loss.backward()
            opt.step()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("params")
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--policy", default=None)
    ap.add_argument("--readout-steps", type=int, default=0, help="also run readout_fit for this many Adam steps")
    ap.add_argument("--readout-lr", type=float, default=5e-5)
    a = ap.parse_args()
    torch.set_num_threads(1)
    cfg = SteerConfig.from_params(json.loads(a.params))
    data_dir = os.environ.get("STEER_DATA_DIR", "data")
    if a.policy:
        model, task, _ = load_policy(a.policy, data_dir)
    else:
        res = load_or_build(cfg.sft_config(), data_dir)
        model, task = res.model, res.task
    model.eval()
    problems = task.sample(a.n, split_rng(0, "test"), "test")
    tiers = np.array([TIERS.index(p.data["tier"]) for p in problems])
    prompts = [task.prompt(p) for p in problems]
    tok = task.tokenizer
    pc, _ = route_probs(model, prompts, tok.stoi[THINK], tok.stoi[DIRECT])
    print(
        f"{a.policy or 'SFT'}: {a.n} scenes; p_c per tier",
        {t: round(float(pc[tiers == i].mean()), 3) for i, t in enumerate(TIERS)},
        f"Spearman {spearman(tiers, pc):+.3f}",
    )
    hard = (tiers == TIERS.index("hard")).astype(int)
    h = a.n // 2
    maj_h = max(hard[h:].mean(), 1 - hard[h:].mean())
    maj_t = max(float((tiers[h:] == i).mean()) for i in range(len(TIERS)))
    print(f"majority class: hard vs not {maj_h:.3f}, three tiers {maj_t:.3f}")
    feats = features(model, prompts)
    f = feats[-1].astype(np.float64)
    mu = f.mean(0)
    between = sum((tiers == i).mean() * float(((f[tiers == i].mean(0) - mu) ** 2).sum()) for i in range(len(TIERS)))
    print(
        f"final normed features: |mean|^2 {float(mu @ mu):.1f}, total variance {float(((f - mu) ** 2).sum(1).mean()):.1f}"
        f", between-tier variance {between:.2f}"
    )
    print("features                 hard vs not   three tiers")
    for j, x in enumerate(feats):
        name = f"block {j + 1} output" if j < len(feats) - 1 else "final normed (route_detach)"
        print(f"{name:<26} {probe(x, hard):>9.3f} {probe(x, tiers):>13.3f}", flush=True)
    if a.readout_steps:
        print(f"route readout fitted to the hard label, Adam lr {a.readout_lr:g} (held-out; p_c per tier)")
        w = model.emb.weight.detach().double().numpy()
        for kind, step, acc, pcs in readout_fit(
            f, hard, w[tok.stoi[THINK]], w[tok.stoi[DIRECT]], a.readout_steps, a.readout_lr
        ):
            per = " / ".join(f"{pcs[tiers[h:] == i].mean():.3f}" for i in range(len(TIERS)))
            print(f"  {kind:<8} step {step:>5}: accuracy {acc:.3f}, p_c {per}")


if __name__ == "__main__":
    main()

"""sae_replay: refit the data-constrained law on the pooled runs of several finished lab runs.

    DJANGO_SETTINGS_MODULE=... .venv/bin/python manage.py shell -c \
        "import sys; sys.argv = ['refit', '5', '6', '--max-r', '64']; exec(open('bench/sae_replay_refit.py').read())"

Takes `scaling_fit` runs (their "runs" table) and `replay_sweep` runs (their "final" table: fresh and replay arms)
by id, pools every (U, R, held-out nMSE) point, fits L = E + B/D′^β with D′ = U + U·R*(1 − e^{−(R−1)/R*}) exactly as
the `scaling_fit` experiment does (`compute.sae_replay.scaling`), and bootstraps runs for 95 % CIs of every
parameter and of the buffer rule's storage reduction.  `--max-r` drops points with R above it (the law has no
over-fitting term, so the rising loss at very large R is outside its form).
"""

from __future__ import annotations

import argparse

import numpy as np

from apps.lab.models import Run
from compute.sae_replay.scaling import fit_law, predict, recommend_buffer


def points(ids: list[int]) -> list[tuple[float, float, float, float]]:
    out = []
    for rid in ids:
        run = Run.objects.get(pk=rid)
        tables = {t.key: t.rows for t in run.tables.all()}
        rows = tables.get("runs") or [r for r in tables["final"] if r["kind"] in ("fresh", "replay")]
        m = float(run.config["m"])
        out += [(m, float(r["U"]), float(r["R"]), float(r["nmse"])) for r in rows]
    return out


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("ids", type=int, nargs="+")
    ap.add_argument("--max-r", type=float, default=1e9)
    ap.add_argument("--target-t-log2", type=int, default=20)
    ap.add_argument("--tolerance", type=float, default=0.01)
    ap.add_argument("--n-boot", type=int, default=200)
    a = ap.parse_args(argv)
    pts = [p for p in points(a.ids) if p[2] <= a.max_r]
    N, U, R, L = (np.array(v) for v in zip(*pts, strict=True))
    fit = fit_law(N, U, R, L, fit_n=False)
    T = float(1 << a.target_t_log2)
    rule = recommend_buffer(fit.params, N[0], T, a.tolerance)
    rng = np.random.default_rng(0)
    boots = []
    for _ in range(a.n_boot):
        idx = rng.integers(0, len(L), len(L))
        inits = [fit.theta, fit.theta + rng.normal(0, 0.3, fit.theta.shape)]
        f = fit_law(N[idx], U[idx], R[idx], L[idx], fit_n=False, inits=inits)
        red = recommend_buffer(f.params, N[0], T, a.tolerance)["storage_reduction"]
        boots.append([f.params.E, f.params.B, f.params.beta, f.params.R_star, red])
    b = np.array(boots)
    lo, hi = np.percentile(b, 2.5, axis=0), np.percentile(b, 97.5, axis=0)
    pred = predict(fit.params, N, U, R)
    print(f"runs {a.ids}, points {len(L)} (R ≤ {a.max_r:g}), log-RMSE {np.sqrt(np.mean(np.log(pred / L) ** 2)):.4f}")
    p = fit.params
    for j, (k, v) in enumerate([("E", p.E), ("B", p.B), ("beta", p.beta), ("R_star", p.R_star)]):
        print(f"{k:>8} = {v:.4g}   95% CI [{lo[j]:.4g}, {hi[j]:.4g}]")
    print(
        f"rule at T = 2^{a.target_t_log2}, x = {a.tolerance:g}: U = {rule['U']:.0f}, storage reduction "
        f"{rule['storage_reduction']:.2f}x  95% CI [{lo[4]:.2f}, {hi[4]:.2f}]"
    )
    for t in (16, 18, 20, 22, 24):
        r = recommend_buffer(p, N[0], float(1 << t), a.tolerance)
        print(f"   T = 2^{t}: recommended U = {r['U']:.0f}, reduction {r['storage_reduction']:.2f}x")
    for u, r_, l_, lp in sorted(zip(U, R, L, pred, strict=True)):
        print(f"   U=2^{np.log2(u):.0f} R={r_:g} nmse={l_:.4f} fit={lp:.4f} resid={np.log(l_ / lp):+.3f}")


main(__import__("sys").argv[1:])

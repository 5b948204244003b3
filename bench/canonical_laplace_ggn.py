"""Benchmark: full GGN + eigendecomposition vs parameter count, native float64 vs laplace-torch; λ sweeps.

Run (from the repository root):  PYTHONPATH=. .venv/bin/python bench/canonical_laplace_ggn.py [--widths 8,16,32,48]

Rows (same process, one thread, so machine contention cancels in the ratios):
* native Gram:  jacrev J (N×P) → factor B → eigh of the N×N Gram BBᵀ (what the experiments use);
* native dense: the same B → G = BᵀB (P×P) → eigh(G);
* laplace-torch: ``Laplace(..., hessian_structure="full", backend=CurvlinopsGGN).fit`` → eigh(posterior precision).
λ sweep (81 values): log Z from cached eigenvalues vs one slogdet(G + λI) per λ vs laplace-torch's
``log_marginal_likelihood`` per λ.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch

from compute.canonical_laplace.curvature import Curvature, ggn_factor, jacobian, log_likelihood
from compute.canonical_laplace.data import make_data
from compute.canonical_laplace.evidence import log_evidence_dense, log_evidence_grid
from compute.canonical_laplace.model import DTYPE, init_params, parse_widths


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bench_width(w: int, x: torch.Tensor, y: torch.Tensor, lams: torch.Tensor, repeat: int, lt: tuple | None) -> str:
    """Time one 1-w-w-1 network; returns the printed row."""
    mlp = parse_widths(1, f"{w}-{w}", 1)
    theta = init_params(mlp, torch.Generator().manual_seed(0))
    f = mlp.forward(theta, x)
    ll = float(log_likelihood(f, y, "regression", 0.3))

    def native_gram() -> torch.Tensor:
        b = ggn_factor(jacobian(mlp, theta, x), mlp.forward(theta, x), "regression", 0.3)
        return Curvature(factor=b).eigvals()

    def native_dense() -> torch.Tensor:
        b = ggn_factor(jacobian(mlp, theta, x), mlp.forward(theta, x), "regression", 0.3)
        return torch.linalg.eigvalsh(b.T @ b)

    t_gram, t_dense = _best(native_gram, repeat), _best(native_dense, repeat)
    eig = native_gram()
    g = Curvature(factor=ggn_factor(jacobian(mlp, theta, x), f, "regression", 0.3)).matrix()
    sq = float((theta**2).sum())
    t_sweep_eig = _best(lambda: log_evidence_grid(ll, eig, sq, lams), repeat)
    t_sweep_slog = _best(lambda: [log_evidence_dense(ll, g, theta, torch.full_like(theta, float(v))) for v in lams], 1)
    t_lt = t_sweep_lt = float("nan")
    if lt is not None:
        Laplace, CurvlinopsGGN, DataLoader, TensorDataset = lt
        old = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        net = mlp.torch_module(theta)
        dl = DataLoader(TensorDataset(x, y), batch_size=len(x))

        def lt_fit() -> object:
            la = Laplace(
                net,
                "regression",
                subset_of_weights="all",
                hessian_structure="full",
                sigma_noise=0.3,
                prior_precision=1.0,
                backend=CurvlinopsGGN,
            )
            la.fit(dl)
            torch.linalg.eigvalsh(la.posterior_precision)
            return la

        t_lt = _best(lt_fit, repeat)
        la = lt_fit()
        # check the two agree before timing the sweep
        z_lt = float(la.log_marginal_likelihood(prior_precision=torch.tensor(0.5)))
        z_nat = float(log_evidence_grid(ll, eig, sq, torch.tensor([0.5], dtype=DTYPE))[0])
        assert abs(z_lt - z_nat) < 1e-6 * abs(z_nat), (z_lt, z_nat)
        t_sweep_lt = _best(lambda: [la.log_marginal_likelihood(prior_precision=v.reshape(1)) for v in lams], 1)
        torch.set_default_dtype(old)
    return (
        f"{'1-' + str(w) + '-' + str(w) + '-1':>10} {mlp.n_params:>6} | {t_gram:>10.4f}s {t_dense:>11.4f}s "
        f"{t_lt:>12.4f}s | {t_dense / t_gram:>10.1f} {t_lt / t_gram:>8.1f} {t_lt / t_dense:>8.2f} | "
        f"{t_sweep_eig:>8.5f}s {t_sweep_slog:>12.4f}s {t_sweep_lt:>8.4f}s {t_sweep_slog / t_sweep_eig:>11.0f} "
        f"{t_sweep_lt / t_sweep_eig:>8.0f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--widths", default="8,16,32,48")
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    try:
        from laplace import Laplace
        from laplace.curvature import CurvlinopsGGN
        from torch.utils.data import DataLoader, TensorDataset
    except ImportError:  # pragma: no cover - optional reference library
        Laplace = CurvlinopsGGN = DataLoader = TensorDataset = None
    data = make_data("sinusoid", args.n, 0.3, 0)
    x, y = data.train.x, data.train.y
    print(f"N = {args.n}, float64, 1 thread; best of {args.repeat}")
    print(
        f"{'net':>10} {'P':>6} | {'native Gram':>11} {'native dense':>12} {'laplace-torch':>13} | "
        f"{'dense/Gram':>10} {'lt/Gram':>8} {'lt/dense':>8} | {'sweep eig':>9} {'sweep slogdet':>13} "
        f"{'sweep lt':>9} {'slogdet/eig':>11} {'lt/eig':>8}"
    )
    lams = torch.logspace(-4, 4, 81, dtype=DTYPE)
    lt = (Laplace, CurvlinopsGGN, DataLoader, TensorDataset) if Laplace is not None else None
    for w in [int(v) for v in args.widths.split(",")]:
        print(bench_width(w, x, y, lams, args.repeat, lt), flush=True)


if __name__ == "__main__":
    main()

"""Batch-1 decode timing: FFN-only (scaled, many distinct layers) and end-to-end, with Amdahl's law beside it.

Benchmark hygiene (spec §6): at least 8 distinct layers whose weights total far more than the last-level cache,
a fresh input and a fresh active set for every (token, layer), warm-up tokens, methods interleaved within each
trial in one process and thread setting, the median over trials.  Gathers are ``index_select`` copies and their
time is reported, not hidden.

Methods (FFN-only): dense; oracle (a given random index set at density p, no predictor); svd (ĝ = A(Bx),
threshold, nonzero, gather, GEMV); gate_first (dense gate GEMV, nonzero, gather of W_u and W_dᵀ rows).
For the synthetic layers the SVD factors are random with rank r, and each layer's τ is the (1 − p)-quantile of
ĝ on random inputs, so the predictor's cost and its data-dependent active sets are real while the density is p.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.svd_sparsity.executor import (
    FFNWeights,
    GatherFFN,
    ffn_dense,
    ffn_gate_first,
    ffn_gather,
    predict_idx,
)


@dataclass
class SynthLayer:
    w: FFNWeights
    W_g: torch.Tensor  # [d_ff, d] (contiguous copy for the gate-first dense gate)
    A: torch.Tensor  # [d_ff, r]
    B: torch.Tensor  # [r, d]
    tau: torch.Tensor  # scalar


def synthetic_layers(d: int, d_ff: int, n_layers: int, rank: int, density: float, seed: int = 0) -> list[SynthLayer]:
    """Random ReGLU layers (N(0, 1/d) weights) with a rank-r predictor calibrated to the target density."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n_layers):
        W_g = torch.randn(d_ff, d, generator=gen) / d**0.5
        W_u = torch.randn(d_ff, d, generator=gen) / d**0.5
        W_d = torch.randn(d, d_ff, generator=gen) / d_ff**0.5
        A = torch.randn(d_ff, rank, generator=gen) / rank**0.5
        B = torch.randn(rank, d, generator=gen) / d**0.5
        probe = torch.randn(256, d, generator=gen)
        tau = torch.quantile(((probe @ B.T) @ A.T).flatten(), 1.0 - density)
        out.append(SynthLayer(FFNWeights.from_dense(W_g, W_u, W_d), W_g, A, B, tau))
    return out


def _time_tokens(fn: Callable[[int], None], n_tokens: int) -> float:
    t0 = time.perf_counter()
    for t in range(n_tokens):
        fn(t)
    return (time.perf_counter() - t0) / n_tokens


@torch.inference_mode()
def ffn_benchmark(
    d: int,
    d_ff: int,
    n_layers: int,
    density: float,
    rank: int,
    n_tokens: int = 64,
    trials: int = 5,
    warmup: int = 8,
    seed: int = 0,
) -> dict[str, float]:
    """Seconds per token (all layers) of each FFN method, the ratios and the svd path's time breakdown."""
    layers = synthetic_layers(d, d_ff, n_layers, rank, density, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    xs = torch.randn(n_tokens + warmup, n_layers, d, generator=gen)  # fresh input per (token, layer)
    k = max(1, round(density * d_ff))
    oracle = [[torch.randperm(d_ff, generator=gen)[:k].sort().values for _ in layers] for _ in range(n_tokens + warmup)]

    def dense(t: int) -> None:
        for li, L in enumerate(layers):
            ffn_dense(L.w, xs[t, li])

    def orc(t: int) -> None:
        for li, L in enumerate(layers):
            ffn_gather(L.w, xs[t, li], oracle[t][li])

    def svd(t: int) -> None:
        for li, L in enumerate(layers):
            ffn_gather(L.w, xs[t, li], predict_idx(xs[t, li], L.A, L.B, L.tau))

    def gate_first(t: int) -> None:
        for li, L in enumerate(layers):
            ffn_gate_first(L.w, L.W_g, xs[t, li])

    # breakdown of the svd path: predictor (+ nonzero), gathers alone, GEMVs on pre-gathered rows
    idx_svd = [[predict_idx(xs[t, li], L.A, L.B, L.tau) for li, L in enumerate(layers)] for t in range(n_tokens)]

    def predictor_only(t: int) -> None:
        for li, L in enumerate(layers):
            predict_idx(xs[t, li], L.A, L.B, L.tau)

    def gather_only(t: int) -> None:
        for li, L in enumerate(layers):
            L.w.Wgu.index_select(0, idx_svd[t][li])
            L.w.WdT.index_select(0, idx_svd[t][li])

    methods = {"dense": dense, "oracle": orc, "svd": svd, "gate_first": gate_first}
    for fn in methods.values():  # warm-up
        for t in range(n_tokens, n_tokens + warmup):
            fn(t)
    times: dict[str, list[float]] = {m: [] for m in [*methods, "predictor", "gather"]}
    for _ in range(trials):
        for name, fn in methods.items():
            times[name].append(_time_tokens(fn, n_tokens))
        times["predictor"].append(_time_tokens(predictor_only, n_tokens))
        times["gather"].append(_time_tokens(gather_only, n_tokens))
    med = {m: statistics.median(v) for m, v in times.items()}
    svd_density = sum(i.numel() for row in idx_svd for i in row) / (n_tokens * n_layers * d_ff)
    return {
        "density": density,
        "svd_density": svd_density,
        "dense_s": med["dense"],
        "oracle_s": med["oracle"],
        "svd_s": med["svd"],
        "gate_first_s": med["gate_first"],
        "predictor_s": med["predictor"],
        "gather_s": med["gather"],
        "gemv_s": max(0.0, med["svd"] - med["predictor"] - med["gather"]),
        "speedup_oracle": med["dense"] / med["oracle"],
        "speedup_svd": med["dense"] / med["svd"],
        "speedup_gate_first": med["dense"] / med["gate_first"],
        "weights_mib": n_layers * 3 * d * d_ff * 4 / 2**20,
    }


class _Timer:
    """Forward pre/post hooks accumulating wall time per module group."""

    def __init__(self) -> None:
        self.acc: dict[str, float] = {}
        self.handles: list = []
        self._t0: dict[int, float] = {}

    def attach(self, module: torch.nn.Module, name: str) -> None:
        def pre(mod, inp):  # type: ignore[no-untyped-def]
            self._t0[id(mod)] = time.perf_counter()

        def post(mod, inp, out):  # type: ignore[no-untyped-def]
            self.acc[name] = self.acc.get(name, 0.0) + time.perf_counter() - self._t0[id(mod)]

        self.handles += [module.register_forward_pre_hook(pre), module.register_forward_hook(post)]

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


@torch.inference_mode()
def decode_tokens(model: TinyLM, prompt: list[int], n_new: int, timer: _Timer | None = None) -> tuple[list[int], float]:
    """Greedy batch-1 decode with the KV cache; returns (tokens, seconds for the n_new decode steps)."""
    cache = model.new_cache(1, len(prompt) + n_new + 1)
    tok = torch.tensor([prompt])
    logits = model(tok, cache=cache)
    nxt = int(logits[0, -1].argmax())
    out = [nxt]
    t0 = time.perf_counter()
    for _ in range(n_new):
        pos = torch.tensor([[cache.length]])
        logits = model(torch.tensor([[nxt]]), positions=pos, cache=cache)
        nxt = int(logits[0, -1].argmax())
        out.append(nxt)
    return out, time.perf_counter() - t0


def e2e_decode(
    model: TinyLM,
    prompt: list[int],
    n_new: int,
    trials: int,
    make_modes: Callable[[str], list[torch.nn.Module]],
    modes: tuple[str, ...] = ("dense", "svd", "oracle", "gate_first"),
    breakdown: bool = True,
) -> dict[str, dict[str, float]]:
    """Tokens/s of each mode (median over trials, interleaved) and, when ``breakdown``, the attention / FFN /
    other split of one extra timed pass.  ``make_modes(mode)`` returns fresh per-layer FFN modules."""
    from compute.svd_sparsity.quality import swap_ffn

    secs: dict[str, list[float]] = {m: [] for m in modes}
    for trial in range(trials + 1):  # trial 0 = warm-up
        for m in modes:
            with swap_ffn(model, make_modes(m)):
                _, s = decode_tokens(model, prompt, n_new)
            if trial:
                secs[m].append(s)
    out: dict[str, dict[str, float]] = {}
    for m in modes:
        s = statistics.median(secs[m])
        row = {"tokens_per_s": n_new / s, "s_per_token": s / n_new}
        if breakdown:
            mods = make_modes(m)
            with swap_ffn(model, mods):
                timer = _Timer()
                for blk in model.blocks:
                    timer.attach(blk.attn, "attention")
                    timer.attach(blk.ffn, "ffn")
                try:
                    _, tot = decode_tokens(model, prompt, n_new)
                finally:
                    timer.remove()
            row["attention_share"] = timer.acc.get("attention", 0.0) / tot
            row["ffn_share"] = timer.acc.get("ffn", 0.0) / tot
            row["other_share"] = 1.0 - row["attention_share"] - row["ffn_share"]
            kept = [getattr(mm, "kept", 0) for mm in mods]
            calls = [max(1, getattr(mm, "calls", 1)) for mm in mods]
            d_ff = model.cfg.d_ff
            row["density"] = sum(k / c for k, c in zip(kept, calls, strict=True)) / (len(mods) * d_ff)
        out[m] = row
    return out


def amdahl(ffn_share: float, ffn_speedup: float) -> float:
    """End-to-end speed-up when a fraction f of the time is sped up s×: 1 / ((1 − f) + f / s)."""
    return 1.0 / ((1.0 - ffn_share) + ffn_share / ffn_speedup)


def synthetic_model(d: int, d_ff: int, n_layers: int, vocab: int, context: int, seed: int = 0) -> TinyLM:
    """A random-weight ReGLU TinyLM of the scaled benchmark's shape (for end-to-end timing only)."""
    torch.manual_seed(seed)
    cfg = LMConfig(
        vocab_size=vocab, d_model=d, n_layers=n_layers, n_heads=max(1, d // 64), d_ff=d_ff, ffn="reglu", max_len=context
    )
    model = TinyLM(cfg)
    model.eval()
    return model


def synthetic_gather_modules(
    model: TinyLM, mode: str, density: float, rank: int, n_calls: int, seed: int = 0
) -> list[GatherFFN]:
    """GatherFFN modules for a random model: svd with random rank-r factors calibrated to density p, oracle with
    fresh random index sets at density p for every call."""
    gen = torch.Generator().manual_seed(seed)
    mods = []
    d, d_ff = model.cfg.d_model, model.cfg.d_ff
    k = max(1, round(density * d_ff))
    for blk in model.blocks:
        A = torch.randn(d_ff, rank, generator=gen) / rank**0.5
        B = torch.randn(rank, d, generator=gen) / d**0.5
        # the FFN input is RMS-normalised (unit RMS × the norm gain, 1 at init)
        probe = torch.randn(256, d, generator=gen)
        tau = torch.quantile(((probe @ B.T) @ A.T).flatten(), 1.0 - density)
        oracle = (
            [torch.randperm(d_ff, generator=gen)[:k].sort().values for _ in range(n_calls)]
            if mode == "oracle"
            else None
        )
        mods.append(GatherFFN(blk.ffn, mode, A, B, tau, oracle))
    return mods

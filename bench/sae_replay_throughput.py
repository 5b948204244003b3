"""sae_replay benchmark: SAE training tokens/s from an in-RAM replay pool vs streaming sources, cache build speed,
and the bytes each arm stores.

    .venv/bin/python bench/sae_replay_throughput.py [--steps 30] [--minilm-seqs 16]

Streaming = producing each batch when it is needed: synthetic (the generator) or MiniLM (tokenize + forward pass
up to the layer, what an SAE trainer without a cache pays).  Replay = indexing a stored fp16 pool.  All numbers
are measured in this one run, on the same thread count, so the ratios are comparable.
"""

from __future__ import annotations

import argparse
import time

import torch

from compute.sae_replay.minilm import MiniLM, load_documents
from compute.sae_replay.replay import PoolSource, TrainSpec, make_sae
from compute.sae_replay.synthetic import GeneratorStream, SparseFeatureGenerator


def sae_steps(spec: TrainSpec, next_batch, steps: int) -> float:
    """Seconds per training step (batch fetch + forward/backward/Adam/renormalize)."""
    sae = make_sae(spec, torch.zeros(spec.d))
    opt = torch.optim.Adam(sae.parameters(), lr=spec.lr)
    t0 = time.perf_counter()
    for _ in range(steps):
        x = next_batch(spec.batch)
        loss, _, _ = sae.loss(x)
        opt.zero_grad()
        loss.backward()
        sae.project_decoder_grad()
        opt.step()
        sae.normalize_decoder()
    return (time.perf_counter() - t0) / steps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--minilm-seqs", type=int, default=16, help="sequences of 128 tokens per MiniLM timing")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rows = []

    # synthetic, d = 64, m = 512, B = 1024
    gen = SparseFeatureGenerator()
    spec = TrainSpec(d=64, m=512, k=8, batch=1024)
    stream = GeneratorStream(gen, 1)
    pool = gen.sample(1 << 14, torch.Generator().manual_seed(2))[0].half()
    ps = PoolSource(pool, 1 << 10, 3)
    t_stream = sae_steps(spec, stream.next, a.steps)
    t_pool = sae_steps(spec, lambda n: ps.next(n).float(), a.steps)
    rows.append(("synthetic d=64 m=512", spec.batch / t_stream, spec.batch / t_pool))

    # MiniLM layer 3, d = 384, m = 1536, B = 1024: streaming = tokenize + forward per batch
    model = MiniLM()
    docs = load_documents()
    ids = [t for text, _ in docs[:200] for t in model.tok.encode(text)]
    seqs = [ids[i : i + 126] for i in range(0, len(ids) - 126, 126)]
    t0 = time.perf_counter()
    n_tok = 0
    for i in range(0, a.minilm_seqs, 8):
        b = seqs[i : i + 8]
        x, m = model.batch(b)
        model.hidden_states(x, m, 3)
        n_tok += sum(len(s) for s in b)
    fwd_tok_s = n_tok / (time.perf_counter() - t0)
    spec_m = TrainSpec(d=384, m=1536, k=16, batch=1024)
    pool_m = torch.randn(1 << 14, 384).half()  # indexing cost only depends on the shape
    ps_m = PoolSource(pool_m, 1 << 8, 3)
    t_pool_m = sae_steps(spec_m, lambda n: ps_m.next(n).float(), max(3, a.steps // 5))
    t_stream_m = t_pool_m + spec_m.batch / fwd_tok_s  # each streamed batch also pays its forward pass
    rows.append(("MiniLM L3 d=384 m=1536", spec_m.batch / t_stream_m, spec_m.batch / t_pool_m))

    print(f"{'source':26s} {'stream tok/s':>13s} {'replay tok/s':>13s} {'replay/stream':>14s}")
    for name, s, r in rows:
        print(f"{name:26s} {s:13.0f} {r:13.0f} {r / s:14.2f}")
    print(f"\nMiniLM cache build (tokenize + forward to layer 3): {fwd_tok_s:.0f} tokens/s")

    T = 1 << 17
    print("\nbytes stored at T = 2^17 MiniLM tokens (fp16, d = 384):")
    print(f"{'arm':12s} {'U':>8s} {'MiB':>8s} {'saved':>7s}")
    for R in (1, 8, 16, 32, 64):
        U = T // R
        print(f"{'fresh' if R == 1 else f'replay R={R}':12s} {U:8d} {U * 384 * 2 / 2**20:8.2f} {R:6d}x")
    print(f"\n(d = 384 fp16 row = {384 * 2} bytes; storage saved = T/U = R by construction)")


if __name__ == "__main__":
    main()

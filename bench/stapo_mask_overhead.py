"""Time of the S2T mask (candidate set + entropy quantile) against the loss step (forward + clipped loss +
backward) on the small model, at several batch sizes; both timed in this process so contention cancels.

Run: .venv/bin/python bench/stapo_mask_overhead.py
"""

from __future__ import annotations

import time
from functools import partial

import torch

from compute.core.lm.model import LMConfig, TinyLM
from compute.core.lm.sampling import logp_entropy
from compute.core.rl.loss import policy_loss
from compute.stapo.mask import s2t_mask


def best_of(fn, reps: int = 5) -> float:  # type: ignore[no-untyped-def]
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def loss_step(model, prompt, pmask, resp, old, adv, valid) -> None:  # type: ignore[no-untyped-def]
    model.zero_grad()
    lp, _ = logp_entropy(model, prompt, pmask, resp)
    loss, _, _ = policy_loss(lp, old, adv, valid, eps_high=0.28)
    loss.backward()


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    V, P, R = 36, 8, 32
    model = TinyLM(LMConfig.sized("small", V, max_len=64))
    print(f"{'rows':>6} {'mask ms':>9} {'loss step ms':>13} {'overhead':>9}")
    for B in (16, 32, 64, 128):
        prompt = torch.randint(3, V, (B, P))
        pmask = torch.ones(B, P, dtype=torch.bool)
        resp = torch.randint(3, V, (B, R))
        valid = torch.ones(B, R)
        adv = torch.randn(B)[:, None].expand(B, R)
        with torch.no_grad():
            old, ent = logp_entropy(model, prompt, pmask, resp)

        tm = best_of(partial(s2t_mask, old, ent, adv, valid, 0.05, 0.75))
        ts = best_of(partial(loss_step, model, prompt, pmask, resp, old, adv, valid), 3)
        print(f"{B:>6} {tm * 1e3:>9.3f} {ts * 1e3:>13.1f} {tm / ts:>9.4f}")


if __name__ == "__main__":
    main()

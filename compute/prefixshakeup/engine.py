"""The real engine: the compute/core tiny causal LM serving a schedule with explicit prefix-KV reuse.

The radix cache stores, per node, the KV of its tokens as a tensor [len, L, 2, H, dh] (token axis first so a
node split is a slice).  For prompt p with n_hit cached tokens the engine concatenates the path's KV into a
core ``KVCache`` (absolute positions 0..n_hit−1, so RoPE is exact), runs only the |p| − n_hit new tokens at
positions n_hit..|p|−1, reads the tag from the last position's logits over the label tokens, and hands the
new tokens' KV back to the cache.  Only a full prefix is ever reused (never a shared middle segment).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from compute.core.lm.model import TinyLM

from .schedule import ScheduleResult, run_schedule
from .workload import LABEL_IDS


@dataclass
class EngineRun:
    sched: ScheduleResult
    seconds: np.ndarray  # [n] measured prefill seconds per prompt (incl. KV gather and hand-back)
    n_forward: np.ndarray  # [n] tokens actually fed to the model (counted inside the engine)
    pred: np.ndarray  # [n] predicted label index per prompt (schedule order)
    label_logits: list[np.ndarray] = field(default_factory=list)

    @property
    def total_seconds(self) -> float:
        return float(self.seconds.sum())


class Engine:
    """Serves prompts with the tiny LM; ``run`` drives ``schedule.run_schedule`` with a real compute step."""

    def __init__(self, model: TinyLM, head: torch.nn.Linear | None = None) -> None:
        self.model = model.eval()
        self.head = head
        self.label_ids = torch.as_tensor(LABEL_IDS, device=model.device)

    def _scores(self, toks: torch.Tensor, **kw: Any) -> torch.Tensor:
        """Label scores at the last position: the tagger head, or the LM logits of the label tokens."""
        if self.head is None:
            return self.model(toks, **kw)[0, -1, self.label_ids]
        _, hidden = self.model(toks, return_hidden=True, **kw)
        return self.head(self.model.ln_f(hidden[-1][0, -1]))

    @torch.inference_mode()
    def prefill(self, p: list[int], hit: int, values: list[Any]) -> tuple[torch.Tensor, torch.Tensor]:
        """Compute tokens p[hit:] on top of the cached prefix KV → (new KV [n_new, L, 2, H, dh], label logits)."""
        m = self.model
        dev = m.device
        cache = m.new_cache(1, len(p))
        if hit:
            kv = torch.cat(values, 0) if len(values) > 1 else values[0]  # (hit, L, 2, H, dh)
            kv = kv.permute(1, 2, 3, 0, 4)  # (L, 2, H, hit, dh)
            for layer in range(m.cfg.n_layers):
                cache.k[layer][0, :, :hit] = kv[layer, 0]
                cache.v[layer][0, :, :hit] = kv[layer, 1]
            cache.valid[:, :hit] = True
            cache.length = hit
        toks = torch.as_tensor(p[hit:], device=dev)[None]
        pos = torch.arange(hit, len(p), device=dev)[None]
        scores = self._scores(toks, positions=pos, cache=cache)
        new = torch.stack(
            [torch.stack([cache.k[i][0, :, hit:], cache.v[i][0, :, hit:]]) for i in range(m.cfg.n_layers)]
        )
        new = new.permute(3, 0, 1, 2, 4).contiguous()  # (n_new, L, 2, H, dh)
        return new, scores

    def run(self, prompts: list[list[int]], capacity: int | None, batch_size: int = 1, page_size: int = 1) -> EngineRun:
        """Serve ``prompts`` in order; per-prompt wall time and the tokens really computed are recorded."""
        secs, fwd, preds, lls = [], [], [], []
        sync = torch.cuda.synchronize if self.model.device.type == "cuda" else (lambda: None)

        def compute(p: list[int], hit: int, values: list[Any]) -> tuple[Any, Any]:
            sync()
            t0 = time.perf_counter()
            new, ll = self.prefill(p, hit, values)
            sync()
            secs.append(time.perf_counter() - t0)
            fwd.append(len(p) - hit)
            lab = ll.float().cpu().numpy()
            preds.append(int(np.argmax(lab)))
            lls.append(lab)
            return new, None

        sched = run_schedule(prompts, capacity, batch_size, page_size, compute)
        return EngineRun(sched, np.array(secs), np.array(fwd), np.array(preds), lls)

    @torch.inference_mode()
    def full_logits(self, p: list[int]) -> torch.Tensor:
        """Label logits of a full recompute (no cache) — the reference for the cached path."""
        return self._scores(torch.as_tensor(p, device=self.model.device)[None])

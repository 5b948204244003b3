"""Batched sampling with a KV cache, and the training-time log-prob/entropy pass (spec grpo_core §2).

``generate`` samples y_t ~ softmax(z_t / T) (optionally top-p truncated), stops rows at EOS and records per
token log π(y_t) and H_t = −Σ p log p of the *untruncated* softmax(z/T).  ``logp_entropy`` recomputes the
same two quantities in one forward over prompt + response (one ``log_softmax``): it is the code path of the
policy loss, so ρ = 1 exactly on the first on-policy update.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from compute.core.lm.model import TinyLM, positions_from_valid


@dataclass
class Generation:
    """Left-padded prompts and right-padded responses of B rows.

    prompt, prompt_mask: [B, P]; response, response_mask, logp, entropy: [B, R].  ``response_mask`` is 1 for
    sampled tokens up to and including EOS, 0 after.  ``source`` maps a row to its prompt index.
    """

    prompt: torch.Tensor
    prompt_mask: torch.Tensor
    response: torch.Tensor
    response_mask: torch.Tensor
    logp: torch.Tensor
    entropy: torch.Tensor
    source: torch.Tensor

    @property
    def lengths(self) -> torch.Tensor:
        return self.response_mask.sum(-1).long()


def left_pad(
    seqs: list[list[int]], pad_id: int, device: torch.device | str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-pad integer sequences → (tokens [B, P], mask [B, P] bool)."""
    P = max(len(s) for s in seqs)
    tok = torch.full((len(seqs), P), pad_id, dtype=torch.long)
    mask = torch.zeros(len(seqs), P, dtype=torch.bool)
    for i, s in enumerate(seqs):
        if s:
            tok[i, P - len(s) :] = torch.tensor(s, dtype=torch.long)
            mask[i, P - len(s) :] = True
    return tok.to(device), mask.to(device)


def right_pad(
    seqs: list[list[int]], pad_id: int, device: torch.device | str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad → (tokens [B, R], mask [B, R] float)."""
    R = max(1, max(len(s) for s in seqs))
    tok = torch.full((len(seqs), R), pad_id, dtype=torch.long)
    mask = torch.zeros(len(seqs), R)
    for i, s in enumerate(seqs):
        tok[i, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[i, : len(s)] = 1.0
    return tok.to(device), mask.to(device)


def _sample(
    logits: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One decoding step: (token [B], log π(token) [B], entropy [B]) of softmax(z/T); greedy when T == 0."""
    t = temperature if temperature > 0 else 1.0
    lp = F.log_softmax(logits.float() / t, dim=-1)
    ent = -(lp.exp() * lp).sum(-1)
    if temperature <= 0:
        tok = lp.argmax(-1)
    else:
        probs = lp.exp()
        if top_p < 1.0:
            sp, si = probs.sort(-1, descending=True)
            keep = (sp.cumsum(-1) - sp) < top_p  # smallest prefix with mass ≥ top_p
            sp = sp * keep
            probs = torch.zeros_like(probs).scatter(-1, si, sp)
        tok = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    return tok, lp, ent


@torch.no_grad()
def generate(
    model: TinyLM,
    prompts: list[list[int]],
    n: int = 1,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_new: int = 64,
    eos_id: int = 2,
    pad_id: int = 0,
    force_prefix: list[list[int]] | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
) -> Generation:
    """Sample n responses per prompt (rows i·n … i·n+n−1 belong to prompt i).

    ``force_prefix[i]`` (per prompt) replaces the first sampled tokens of prompt i's responses by fixed ones
    (route/role tokens); their log-probs are recorded like sampled ones.  ``use_cache=False`` recomputes the
    whole sequence at every step (the slow reference of the KV-cache benchmark).
    """
    was_training = model.training
    model.eval()
    dev = model.device
    rows = [p for p in prompts for _ in range(n)]
    source = torch.arange(len(prompts), device=dev).repeat_interleave(n)
    tok, pmask = left_pad(rows, pad_id, dev)
    B, P = tok.shape
    if P + max_new > model.cfg.max_len:
        raise ValueError(f"prompt ({P}) + max_new ({max_new}) exceeds the context length {model.cfg.max_len}")
    fp_len = torch.zeros(B, dtype=torch.long, device=dev)
    fp = torch.zeros(B, 1, dtype=torch.long, device=dev)
    if force_prefix is not None:
        fr = [f for f in force_prefix for _ in range(n)]
        fp, _ = right_pad(fr, pad_id, dev)
        fp_len = torch.tensor([len(f) for f in fr], device=dev)
    out_tok = torch.full((B, max_new), pad_id, dtype=torch.long, device=dev)
    out_mask = torch.zeros(B, max_new, device=dev)
    out_lp = torch.zeros(B, max_new, device=dev)
    out_ent = torch.zeros(B, max_new, device=dev)
    finished = torch.zeros(B, dtype=torch.bool, device=dev)

    cache = model.new_cache(B, P + max_new) if use_cache else None
    pos = positions_from_valid(pmask)
    logits = model(tok, pos, pmask, cache)[:, -1]  # type: ignore[index]
    next_pos = pmask.long().sum(-1)
    seq, seq_valid = tok, pmask
    steps = 0
    for t in range(max_new):
        y, lp, ent = _sample(logits, temperature, top_p, generator)
        forced = t < fp_len
        if forced.any():
            y = torch.where(forced, fp[:, min(t, fp.shape[1] - 1)], y)
        y = torch.where(finished, torch.full_like(y, pad_id), y)
        live = ~finished
        out_tok[:, t] = y
        out_mask[:, t] = live.float()
        out_lp[:, t] = torch.where(live, lp.gather(-1, y[:, None]).squeeze(-1), 0.0)
        out_ent[:, t] = torch.where(live, ent, 0.0)
        finished = finished | (y == eos_id)
        steps = t + 1
        if bool(finished.all()) or t == max_new - 1:
            break
        if cache is not None:
            logits = model(y[:, None], next_pos[:, None], torch.ones(B, 1, dtype=torch.bool, device=dev), cache)[:, -1]  # type: ignore[index]
        else:
            seq = torch.cat([seq, y[:, None]], dim=1)
            seq_valid = torch.cat([seq_valid, torch.ones(B, 1, dtype=torch.bool, device=dev)], dim=1)
            logits = model(seq, positions_from_valid(seq_valid), seq_valid)[:, -1]  # type: ignore[index]
        next_pos = next_pos + 1
    if was_training:
        model.train()
    return Generation(
        prompt=tok,
        prompt_mask=pmask,
        response=out_tok[:, :steps],
        response_mask=out_mask[:, :steps],
        logp=out_lp[:, :steps],
        entropy=out_ent[:, :steps],
        source=source,
    )


def logp_entropy(
    model: TinyLM,
    prompt: torch.Tensor,
    prompt_mask: torch.Tensor,
    response: torch.Tensor,
    temperature: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One forward over [prompt ; response]: log π(y_t | ·) and H_t of softmax(z_t/T), both [B, R].

    Keeps the autograd graph (callers wrap in ``no_grad`` for old/ref log-probs).
    """
    B, P = prompt.shape
    R = response.shape[1]
    inp = torch.cat([prompt, response[:, :-1]], dim=1)
    valid = torch.cat([prompt_mask.bool(), torch.ones(B, R - 1, dtype=torch.bool, device=prompt.device)], dim=1)
    logits = model(inp, positions_from_valid(valid), valid)[:, P - 1 :]  # type: ignore[index]  # (B, R, V)
    t = temperature if temperature > 0 else 1.0
    lp_all = F.log_softmax(logits.float() / t, dim=-1)
    logp = lp_all.gather(-1, response[..., None]).squeeze(-1)
    entropy = -(lp_all.exp() * lp_all).sum(-1)
    return logp, entropy

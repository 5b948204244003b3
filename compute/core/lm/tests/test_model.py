"""Known answers for the tiny LM: KV cache = full recompute, padding invariance, batched = per-row greedy."""

from __future__ import annotations

import pytest
import torch

from compute.core.lm import CharTokenizer, LMConfig, TinyLM, WordTokenizer, generate, left_pad, logp_entropy
from compute.core.lm.model import positions_from_valid

ATOL = 1e-5


def assert_close(a: torch.Tensor, b: torch.Tensor, atol: float = ATOL) -> None:
    """max |a − b| ≤ atol (torch.testing is avoided: importing it costs seconds)."""
    assert a.shape == b.shape, (a.shape, b.shape)
    err = float((a - b).abs().max()) if a.numel() else 0.0
    assert err <= atol, f"max abs error {err:.3g} > {atol:g}"


def _model(ffn: str = "gelu", seed: int = 0) -> TinyLM:
    torch.manual_seed(seed)
    return TinyLM(LMConfig(vocab_size=20, d_model=32, n_layers=2, n_heads=2, d_ff=64, ffn=ffn, max_len=64)).eval()


PROMPTS = [[1, 5, 6, 7, 8, 9], [1, 4], [1, 10, 11, 12]]  # mixed lengths → left padding


@pytest.mark.parametrize("ffn", ["gelu", "reglu"])
def test_kv_cache_logits_equal_full_recompute_left_padded(ffn: str) -> None:
    m = _model(ffn)
    tok, valid = left_pad(PROMPTS, 0)
    cont = torch.randint(3, 20, (3, 5), generator=torch.Generator().manual_seed(1))
    full_tok = torch.cat([tok, cont], 1)
    full_valid = torch.cat([valid, torch.ones(3, 5, dtype=torch.bool)], 1)
    with torch.no_grad():
        full = m(full_tok, positions_from_valid(full_valid), full_valid)
        cache = m.new_cache(3, full_tok.shape[1])
        pre = m(tok, positions_from_valid(valid), valid, cache)
        assert_close(pre[valid], full[:, : tok.shape[1]][valid])
        pos = valid.long().sum(-1)
        for t in range(5):
            step = m(cont[:, t : t + 1], (pos + t)[:, None], torch.ones(3, 1, dtype=torch.bool), cache)
            assert_close(step[:, 0], full[:, tok.shape[1] + t])


def test_left_padding_does_not_change_a_row() -> None:
    m = _model()
    tok, valid = left_pad(PROMPTS, 0)
    with torch.no_grad():
        batched = m(tok, positions_from_valid(valid), valid)
        for i, p in enumerate(PROMPTS):
            alone = m(torch.tensor([p]))
            assert_close(batched[i, -len(p) :], alone[0])


def test_batched_greedy_equals_per_sequence_greedy_and_cache_free_path() -> None:
    m = _model()
    g = generate(m, PROMPTS, temperature=0.0, max_new=12, eos_id=3)
    g_nc = generate(m, PROMPTS, temperature=0.0, max_new=12, eos_id=3, use_cache=False)
    assert torch.equal(g.response, g_nc.response)
    for i, p in enumerate(PROMPTS):
        gi = generate(m, [p], temperature=0.0, max_new=12, eos_id=3)
        n = int(gi.response_mask[0].sum())
        assert g.response[i, :n].tolist() == gi.response[0, :n].tolist()
        assert int(g.response_mask[i].sum()) == n


def test_sampled_logp_and_entropy_match_training_pass() -> None:
    """logp_entropy reproduces the sampler's log-probs/entropies (so ρ = 1 on the first on-policy update)."""
    m = _model()
    g = generate(m, PROMPTS, n=3, temperature=0.7, max_new=10, eos_id=3, generator=torch.Generator().manual_seed(0))
    lp, ent = logp_entropy(m, g.prompt, g.prompt_mask, g.response, temperature=0.7)
    mk = g.response_mask > 0
    assert_close(lp[mk], g.logp[mk])
    assert_close(ent[mk], g.entropy[mk])
    # the response mask ends at EOS (EOS itself included), zero afterwards
    for r in range(g.response.shape[0]):
        n = int(g.response_mask[r].sum())
        assert g.response_mask[r, :n].eq(1).all() and g.response_mask[r, n:].eq(0).all()
        if n < g.response.shape[1]:
            assert int(g.response[r, n - 1]) == 3


def test_force_prefix_and_top_p() -> None:
    m = _model()
    g = generate(
        m, PROMPTS, n=2, max_new=6, eos_id=3, force_prefix=[[7, 8], [9], []], generator=torch.Generator().manual_seed(0)
    )
    assert g.response[:2, :2].tolist() == [[7, 8], [7, 8]] and g.response[2:4, 0].tolist() == [9, 9]
    greedy = generate(m, PROMPTS, temperature=0.0, max_new=6, eos_id=3)
    tiny_p = generate(
        m, PROMPTS, temperature=1.0, top_p=1e-6, max_new=6, eos_id=3, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(greedy.response, tiny_p.response)  # top-p → 0 keeps only the argmax


def test_tokenizers_round_trip() -> None:
    ct = CharTokenizer(list("0123456789+-=; answer"), extra_tokens=("<solve>",))
    s = "<solve>12+7=;2+7+0=9;answer 19"
    assert ct.decode(ct.encode(s)) == s and ct.encode("<solve>") == [ct.stoi["<solve>"]]
    wt = WordTokenizer(["tom", "has", "apples", ".", "answer", *"0123456789"])
    w = "tom has 120 apples . answer 7"
    assert wt.decode(wt.encode(w)) == w
    with pytest.raises(KeyError):
        ct.encode("xyz")


def test_adamw_first_step_and_decoupled_decay() -> None:
    """Step 1 with bias correction: Δθ = −lr·g/(|g| + ε) − lr·λ·θ."""
    from compute.core.lm.optim import AdamW

    p = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
    opt = AdamW([p], lr=0.1, eps=1e-8, weight_decay=0.5)
    p.grad = torch.tensor([0.5, -4.0, 0.0])
    opt.step()
    expected = torch.tensor([1.0, -2.0, 3.0]) * (1 - 0.05) - 0.1 * torch.tensor([1.0, -1.0, 0.0])
    assert_close(p.detach(), expected, atol=1e-6)

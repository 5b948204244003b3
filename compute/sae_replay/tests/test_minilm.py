"""Known answers for the MiniLM source: the published sentence similarities, WordPiece, the cache layout."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from compute.sae_replay.minilm import MiniLM, build_cache, first_letter_labels, load_cache


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM()


def test_sentence_similarities_match_the_model_card(model: MiniLM) -> None:
    """sentence-transformers' quickstart for all-MiniLM-L6-v2 prints 0.6660, 0.1046, 0.1411 for these sentences."""
    e = model.sentence_embeddings(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    s = e @ e.T
    assert s[0, 1].item() == pytest.approx(0.6660, abs=5e-4)
    assert s[0, 2].item() == pytest.approx(0.1046, abs=5e-4)
    assert s[1, 2].item() == pytest.approx(0.1411, abs=5e-4)


def test_wordpiece_uncased_with_accents_stripped(model: MiniLM) -> None:
    toks = [model.tok.inv[i] for i in model.tok.encode("Naïve tokenization's")]
    assert toks == ["naive", "token", "##ization", "'", "s"]
    assert first_letter_labels(np.array(model.tok.encode("Naïve tokenization's")), model.tok.inv).tolist() == [
        13, 19, -1, -1, 18,
    ]  # fmt: skip


def test_micro_cache_drops_special_tokens_and_splits_by_document(tmp_path) -> None:
    build_cache(tmp_path, 300, 200, [2], batch_seqs=8)
    tr, ev, meta = load_cache(tmp_path, 300, 200, 2)
    assert tr.shape == (300, 384) and ev.shape == (200, 384) and tr.dtype == np.float16
    assert not set(meta["train"]["doc"].tolist()) & set(meta["eval"]["doc"].tolist())  # disjoint documents
    assert not {101, 102, 0} & set(meta["train"]["token"].tolist())  # no [CLS], [SEP], [PAD]
    # no [CLS]-sized outliers: every row has a LayerNorm-scale norm
    assert float(torch.from_numpy(np.asarray(tr, np.float32)).norm(dim=1).max()) < 100

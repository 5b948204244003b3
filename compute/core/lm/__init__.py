"""Tiny causal LM shared by the RL papers: model, KV-cache sampling, tokenizers, SFT warm-up build."""

from compute.core.lm.model import SIZES, KVCache, LMConfig, TinyLM
from compute.core.lm.sampling import Generation, generate, left_pad, logp_entropy, right_pad
from compute.core.lm.tokenizer import CharTokenizer, Tokenizer, WordTokenizer, tokenizer_from_dict

__all__ = [
    "SIZES",
    "CharTokenizer",
    "Generation",
    "KVCache",
    "LMConfig",
    "TinyLM",
    "Tokenizer",
    "WordTokenizer",
    "generate",
    "left_pad",
    "logp_entropy",
    "right_pad",
    "tokenizer_from_dict",
]

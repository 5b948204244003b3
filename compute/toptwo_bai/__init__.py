"""β-EB-TCI best-arm identification for Bernoulli bandits (Nguyen & Dam 2026; Jourdan et al. 2022).

Modules: ``rules`` (kl, transportation cost, leader/challenger, thresholds), ``characteristic`` (T*, T*_β, optimal
allocations), ``simulator`` (vectorized numpy simulator and the per-run loop reference), ``torch_sim`` (torch path),
``config`` (the config dataclasses and instances), ``stats`` (summaries, figures), ``run`` (experiment entry points).
"""

"""STARE (arXiv 2606.19236): surprisal-guided token-level advantage reweighting for entropy stability in GRPO.

A plug-in of the shared GRPO core (``compute.core.rl``): ``entropy`` holds the first-order entropy analysis,
``plugin`` the quantile selection, the reweighting, the target-entropy gate and the Clip-Cov / KL-Cov baselines,
``run`` the entry points.
"""

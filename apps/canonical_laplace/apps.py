from django.apps import AppConfig


class CanonicalLaplaceConfig(AppConfig):
    """γ-canonicalized empirical-Bayes Laplace for ReLU networks; experiments in ``experiments.py``."""

    name = "apps.canonical_laplace"
    label = "canonical_laplace"
    verbose_name = "Scale-invariant empirical-Bayes Laplace for ReLU networks (γ-canonicalization)"

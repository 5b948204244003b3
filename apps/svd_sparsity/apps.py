from django.apps import AppConfig


class SvdSparsityConfig(AppConfig):
    """Training-free contextual sparsity for ReGLU FFNs (truncation-aware SVD predictors); see ``experiments.py``."""

    name = "apps.svd_sparsity"
    label = "svd_sparsity"
    verbose_name = "Training-free contextual sparsity for ReGLU FFNs (truncation-aware SVD predictors)"

from django.apps import AppConfig


class VerifiableDpConfig(AppConfig):
    """Shared-noise verifiable DP counting (SN-VBM, SN-VLM); experiments in ``experiments.py``."""

    name = "apps.verifiable_dp"
    label = "verifiable_dp"
    verbose_name = "Verifiable DP with shared noise (SN-VBM / SN-VLM)"

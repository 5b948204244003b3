from django.apps import AppConfig


class StrataConfig(AppConfig):
    """STRATA: tile-trained autoregressive atmosphere emulator rolled out globally; experiments in ``experiments.py``."""

    name = "apps.strata"
    label = "strata"
    verbose_name = "STRATA: tile-based storm-resolving atmosphere emulator"

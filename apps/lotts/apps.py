from django.apps import AppConfig


class LottsConfig(AppConfig):
    """LoTTS: training-free localized test-time scaling for diffusion; experiments in ``experiments.py``."""

    name = "apps.lotts"
    label = "lotts"
    verbose_name = "LoTTS: localized test-time scaling for diffusion models"

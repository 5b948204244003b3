from django.apps import AppConfig


class SaeReplayConfig(AppConfig):
    """SAE training with replayed activation buffers; experiments in ``experiments.py``."""

    name = "apps.sae_replay"
    label = "sae_replay"
    verbose_name = "SAEs from replayed activation buffers (diversity–repetition scaling law)"

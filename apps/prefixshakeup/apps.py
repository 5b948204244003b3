from django.apps import AppConfig


class PrefixShakeupConfig(AppConfig):
    """PrefixShakeup: proactive prompt-prefix re-forming for offline LLM tagging; experiments in ``experiments.py``."""

    name = "apps.prefixshakeup"
    label = "prefixshakeup"
    verbose_name = "PrefixShakeup (prompt prefix re-forming for offline LLM tagging)"

"""Django app manifest for the shared tiny-LM + GRPO core demo (declarations live in experiments.py)."""

from django.apps import AppConfig


class GrpoCoreConfig(AppConfig):
    name = "apps.grpo_core"
    label = "grpo_core"
    verbose_name = "Shared core: tiny LM + GRPO"
    default_auto_field = "django.db.models.BigAutoField"

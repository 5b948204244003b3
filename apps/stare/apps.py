"""Django app manifest for STARE (declarations live in experiments.py)."""

from django.apps import AppConfig


class StareConfig(AppConfig):
    name = "apps.stare"
    label = "stare"
    verbose_name = "STARE: surprisal-guided token reweighting for entropy stability"
    default_auto_field = "django.db.models.BigAutoField"

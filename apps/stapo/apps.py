"""Django app manifest for STAPO (declarations live in experiments.py)."""

from django.apps import AppConfig


class StapoConfig(AppConfig):
    name = "apps.stapo"
    label = "stapo"
    verbose_name = "STAPO: silencing spurious tokens in group-based RL"
    default_auto_field = "django.db.models.BigAutoField"

"""Django app manifest for the toptwo_bai paper (declarations live in experiments.py)."""

from django.apps import AppConfig


class ToptwoBaiConfig(AppConfig):
    name = "apps.toptwo_bai"
    label = "toptwo_bai"
    verbose_name = "β-EB-TCI best-arm identification (top-two, Bernoulli bandits)"
    default_auto_field = "django.db.models.BigAutoField"

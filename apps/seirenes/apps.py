"""Django app manifest for Seirênes (declarations live in experiments.py)."""

from django.apps import AppConfig


class SeirenesConfig(AppConfig):
    name = "apps.seirenes"
    label = "seirenes"
    verbose_name = "Seirênes: adversarial self-play with evolving distractions"
    default_auto_field = "django.db.models.BigAutoField"

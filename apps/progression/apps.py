"""Django app manifest for the progression paper (declarations live in experiments.py)."""

from django.apps import AppConfig


class ProgressionConfig(AppConfig):
    name = "apps.progression"
    label = "progression"
    verbose_name = "STEP: prototype-anchored latent compass for progressive time series"
    default_auto_field = "django.db.models.BigAutoField"

"""Django app manifest for STEER (declarations live in experiments.py)."""

from django.apps import AppConfig


class SteerConfig(AppConfig):
    name = "apps.steer"
    label = "steer"
    verbose_name = "STEER: adaptive reasoning routes for driving policies"
    default_auto_field = "django.db.models.BigAutoField"

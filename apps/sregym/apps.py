"""Django app manifest for the sregym paper (declarations live in experiments.py)."""

from django.apps import AppConfig


class SregymConfig(AppConfig):
    name = "apps.sregym"
    label = "sregym"
    verbose_name = "SREGym: a live benchmark for AI SRE agents (loopback SRE-Lite)"
    default_auto_field = "django.db.models.BigAutoField"

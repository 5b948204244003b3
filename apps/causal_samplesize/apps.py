"""Django app manifest for the causal_samplesize paper (declarations live in experiments.py)."""

from django.apps import AppConfig


class CausalSamplesizeConfig(AppConfig):
    name = "apps.causal_samplesize"
    label = "causal_samplesize"
    verbose_name = "Sample-size design for bounds on probabilities of causation"
    default_auto_field = "django.db.models.BigAutoField"

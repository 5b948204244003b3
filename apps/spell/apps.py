from django.apps import AppConfig


class SpellConfig(AppConfig):
    """Self-programmed execution (SPE) and the Spell language; experiments in ``experiments.py``."""

    name = "apps.spell"
    label = "spell"
    verbose_name = "Spell: self-programmed execution for language models"

"""Django app manifest for the modular_control paper (declarations live in experiments.py)."""

from django.apps import AppConfig


class ModularControlConfig(AppConfig):
    """Universal morphology control with modular recurrence (ModRec); experiments in ``experiments.py``."""

    name = "apps.modular_control"
    label = "modular_control"
    verbose_name = "Modular recurrence for universal morphology control (MuJoCo, SMP robots)"
    default_auto_field = "django.db.models.BigAutoField"

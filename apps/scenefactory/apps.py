"""Django app manifest for the scenefactory paper (declarations live in experiments.py)."""

from django.apps import AppConfig


class ScenefactoryConfig(AppConfig):
    name = "apps.scenefactory"
    label = "scenefactory"
    verbose_name = "SceneFactory: batched-tensor physics driving (VecDrive on torch)"
    default_auto_field = "django.db.models.BigAutoField"

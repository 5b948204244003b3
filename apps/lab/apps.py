from django.apps import AppConfig


class LabConfig(AppConfig):
    """The core: turns paper apps' declarations into catalog, forms, API, tasks, dashboards and admin."""

    name = "apps.lab"
    label = "lab"
    verbose_name = "paperlab core"

    def ready(self) -> None:
        from . import checks, signals  # noqa: F401  (register system checks and signal handlers)
        from .registry import registry

        registry.load()

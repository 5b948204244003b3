from django.apps import AppConfig


class DemoPaperConfig(AppConfig):
    name = "tests.demo_paper"
    label = "demo_paper"

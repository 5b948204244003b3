"""The Celery application, configured from Django's CELERY_* settings."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("paperlab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["apps.lab"])

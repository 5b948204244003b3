"""The load benchmark: the production settings (PostgreSQL, Redis, ASGI) plus the controllable demo paper,
over plain http on loopback.  Rate limits come from the environment (the benchmark raises them)."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-" + "y" * 40)
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/paperlab_bench")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/7")

from .production import *  # noqa: E402,F403

SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
SECURE_HSTS_SECONDS = 0
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS = [*INSTALLED_APPS, "tests.demo_paper"]  # noqa: F405
LOGGING = {**LOGGING, "root": {"handlers": ["console"], "level": "WARNING"}}  # noqa: F405

"""The test suite: the production settings pointed at PostgreSQL and Redis on 127.0.0.1, with http allowed."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret-key-" + "x" * 40)
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/paperlab")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/5")
os.environ.setdefault("PAPERLAB_DATA_DIR", "/tmp/paperlab-test-data")

from .production import *  # noqa: E402,F403

SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
SECURE_HSTS_SECONDS = 0
ALLOWED_HOSTS = ["*"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {
        "anon": "100000/min",
        "user": "100000/min",
        "run_create": "100000/min",
        "auth": "100000/min",
    },
}  # noqa: F405

# a controllable fake paper used by the platform's own tests
INSTALLED_APPS = [*INSTALLED_APPS, "tests.demo_paper"]  # noqa: F405
PAPERLAB = {**PAPERLAB, "STALE_AFTER_SECONDS": 6, "HEARTBEAT_SECONDS": 1}  # noqa: F405
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:6379/6"}
}  # tests may clear it

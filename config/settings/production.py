"""Production: everything from the environment, strictly. DATABASE_URL (PostgreSQL), REDIS_URL, DJANGO_SECRET_KEY."""

import os

import dj_database_url

from .base import *  # noqa: F403
from .base import env, env_bool

SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
DEBUG = False
# Under ASGI each request runs in its own thread, so persistent connections would pile up until
# PostgreSQL refuses clients: close them per request (put a pooler such as PgBouncer in front at scale).
DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=0)}

# a shared cache, so rate limits hold across processes and hosts
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": os.environ.get("REDIS_CACHE_URL", os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")),
    }
}

SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = int(env("DJANGO_SECURE_HSTS_SECONDS", "31536000") or 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
CSRF_TRUSTED_ORIGINS = [o for o in (env("DJANGO_CSRF_TRUSTED_ORIGINS", "") or "").split(",") if o]

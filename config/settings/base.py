"""Settings shared by every deployment; overlays (local, production, test) change only what differs.

Django settings reference: https://docs.djangoproject.com/en/5.2/ref/settings/
"""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


# --- core --------------------------------------------------------------------------------------
SECRET_KEY = env("DJANGO_SECRET_KEY", "insecure-local-only-key-change-me")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = [h for h in (env("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]") or "").split(",") if h]
ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = None
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# Data directory for caches, checkpoints and run artifacts (ignored by git).
DATA_DIR = Path(env("PAPERLAB_DATA_DIR", str(BASE_DIR / "data")))
MEDIA_ROOT = DATA_DIR / "media"
MEDIA_URL = "/media/"

# --- apps: DJANGO_APPS + THIRD_PARTY_APPS + LOCAL_APPS -----------------------------------------
DJANGO_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
]
THIRD_PARTY_APPS = [
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI assets served locally (no CDN)
    "channels",
]
# The paper apps: this list is the only place a paper is named outside its own app.
PAPER_APPS = [
    "apps.toptwo_bai",
    "apps.verifiable_dp",
    "apps.causal_samplesize",
    "apps.spell",
    "apps.canonical_laplace",
    "apps.scenefactory",
    "apps.progression",
    "apps.grpo_core",
    "apps.stare",
    "apps.strata",
    "apps.ssdg_explainer",
    "apps.stapo",
    "apps.seirenes",
    "apps.prefixshakeup",
    "apps.sae_replay",
    "apps.lotts",
    "apps.svd_sparsity",
    "apps.steer",
    "apps.sregym",
    "apps.modular_control",
]
LOCAL_APPS = ["apps.lab", *PAPER_APPS]
INSTALLED_APPS = DJANGO_APPS + THIRD_PARTY_APPS + LOCAL_APPS

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# --- static files (plotly.min.js is served straight from the installed plotly package) ------------
STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static", ("lab", BASE_DIR / "frontend")]


def _plotly_dir() -> Path | None:
    try:
        import plotly

        return Path(plotly.__file__).parent / "package_data"
    except ImportError:  # pragma: no cover
        return None


if _plotly_dir():  # /static/vendor/plotly.min.js straight from the installed plotly package
    STATICFILES_DIRS.append(("vendor", _plotly_dir()))

# --- auth ---------------------------------------------------------------------------------------
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# --- REST framework (https://www.django-rest-framework.org/api-guide/settings/) -----------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
        "rest_framework.throttling.ScopedRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env("PAPERLAB_RATE_ANON", "600/min"),
        "user": env("PAPERLAB_RATE_USER", "3000/min"),
        "run_create": env("PAPERLAB_RATE_RUN_CREATE", "120/min"),
        "auth": env("PAPERLAB_RATE_AUTH", "20/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "paperlab API",
    "DESCRIPTION": "Run NeurIPS 2026 papers' methods: catalog, runs, series, artifacts.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.lab.schema.add_experiment_schemas",
    ],
}

# --- Redis, Celery, Channels --------------------------------------------------------------------
REDIS_URL = env("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = False  # a lost worker's run is marked failed by the reaper, not re-run blindly
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_TASK_TIME_LIMIT = 2100
CELERY_TASK_SOFT_TIME_LIMIT = 1800
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {"reap-stale-runs": {"task": "lab.reap_stale_runs", "schedule": 60.0}}
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 4 * 3600}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

CHANNEL_LAYERS = {
    "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}},
}

# --- paperlab -----------------------------------------------------------------------------------
PAPERLAB = {
    # queues that have workers; a GPU experiment goes to "gpu" only when listed here
    "GPU_QUEUE_ENABLED": env_bool("PAPERLAB_GPU_QUEUE", False),
    "HEARTBEAT_SECONDS": 5,
    "STALE_AFTER_SECONDS": int(env("PAPERLAB_STALE_AFTER", "60") or 60),
    "FLUSH_SECONDS": 0.25,
    "MAX_CONCURRENT_RUNS_PER_USER": int(env("PAPERLAB_MAX_CONCURRENT", "4") or 4),
    "MAX_QUEUED_RUNS_PER_USER": int(env("PAPERLAB_MAX_QUEUED", "50") or 50),
    "MAX_SWEEP_SIZE": int(env("PAPERLAB_MAX_SWEEP", "200") or 200),
    "CANCEL_GRACE_SECONDS": int(env("PAPERLAB_CANCEL_GRACE", "30") or 30),
    "LOGIN_ATTEMPTS_PER_MINUTE": 20,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "INFO"},
    "loggers": {"django.channels.server": {"level": "WARNING"}},
}

# WhiteNoise serves static files from the finders too (plotly.min.js from the plotly package),
# so a deployment works with or without `collectstatic`.
WHITENOISE_USE_FINDERS = True

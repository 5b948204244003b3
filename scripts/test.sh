#!/usr/bin/env bash
# The test command (make test, .ci/run): PostgreSQL + Redis on 127.0.0.1 (started when installed but
# not running), headless Chromium for the browser test (installed from Debian's packages when
# possible), then pytest with the test settings (= production settings pointed at them).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}

if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null 2>&1; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  fi
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
if ! (command -v redis-cli >/dev/null && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1); then
  if command -v redis-server >/dev/null 2>&1; then
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
    sleep 1
  fi
fi
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium for the browser test (Debian package)…"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/tmp/paperlab-apt.log 2>&1 \
    || echo "could not install chromium (see /tmp/paperlab-apt.log)"
fi
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/paperlab}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/5}
export DJANGO_SETTINGS_MODULE=config.settings.test
exec $PY -m pytest "$@"

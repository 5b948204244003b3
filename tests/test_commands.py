"""Headless use and deployment checks: runexperiment (--list, --json), check --deploy with production settings."""

import json
import os
import subprocess
import sys

import pytest
from django.core.management import call_command

from apps.lab.models import Run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.django_db
def test_runexperiment_json(capsys):
    call_command(
        "runexperiment",
        "demo/counter",
        "--preset",
        "smoke",
        "--set",
        "a=1.5",
        "--set",
        "weights=0.25,0.75",
        "--seed",
        "9",
        "--json",
    )
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "succeeded" and out["experiment"] == "demo/counter" and out["seed"] == 9
    assert out["config"]["weights"] == [0.25, 0.75] and out["summary"]["last"] == 1.5 * 4
    assert Run.objects.get(pk=out["id"]).source == "cli"


@pytest.mark.django_db
def test_runexperiment_rejects_bad_value():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="a: must be between -10 and 10"):
        call_command("runexperiment", "demo/counter", "--set", "a=99")


def test_runexperiment_list(capsys):
    call_command("runexperiment", "--list")
    assert "demo/counter" in capsys.readouterr().out.split()
    call_command("runexperiment", "--list", "--json")
    listing = json.loads(capsys.readouterr().out)
    demo = next(e for e in listing if e["id"] == "demo/counter")
    assert demo["schema"]["properties"]["n_steps"]["minimum"] == 1 and "smoke" in demo["presets"]


def test_check_deploy_passes_with_production_settings():
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY="prod-" + "k3y!" * 16,
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/paperlab",
        REDIS_URL="redis://127.0.0.1:6379/5",
        DJANGO_ALLOWED_HOSTS="lab.example.org",
    )
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    r = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no issues" in r.stdout


def test_compute_never_imports_django():
    """compute/ is pure numpy/torch: no Django, Celery, Channels or Plotly imports anywhere."""
    import pathlib
    import re

    banned = re.compile(r"^\s*(from|import)\s+(django|celery|channels|plotly|rest_framework)\b", re.M)
    offenders = [str(p) for p in pathlib.Path(ROOT, "compute").rglob("*.py") if banned.search(p.read_text())]
    assert offenders == []

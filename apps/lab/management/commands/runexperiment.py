"""Run an experiment in the foreground, stored like any other run.

python manage.py runexperiment toptwo_bai/live_run --set delta=0.01 --set arm_means=0.5,0.45 --preset smoke
python manage.py runexperiment --list [--json]
"""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from apps.lab.catalog import sync_catalog
from apps.lab.declare import ValidationError
from apps.lab.models import Experiment
from apps.lab.registry import registry
from apps.lab.runner import execute_run
from apps.lab.services import create_run, resolve_config


class Command(BaseCommand):
    help = "Run <paper>/<experiment> in the foreground (progress on stderr); --list lists experiments."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("experiment", nargs="?", help="<paper>/<experiment>")
        parser.add_argument(
            "--set", action="append", default=[], metavar="KEY=VALUE", help="parameter value (repeatable)"
        )
        parser.add_argument("--preset", default=None, help="start from a named preset")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
        parser.add_argument("--list", action="store_true", help="list experiment ids")
        parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")

    def handle(self, *args, **opts):  # type: ignore[no-untyped-def]
        registry.load()
        if opts["list"]:
            if opts["json"]:
                self.stdout.write(json.dumps([e.describe() for e in registry.experiments.values()], indent=1))
            else:
                for key in registry.experiments:
                    self.stdout.write(key)
            return
        if not opts["experiment"]:
            raise CommandError("name an experiment as <paper>/<experiment> (see --list)")
        try:
            decl = registry.experiment(opts["experiment"])
        except KeyError as exc:
            raise CommandError(str(exc)) from None
        sync_catalog()
        exp = Experiment.objects.get(paper__slug=decl.paper.slug, slug=decl.slug)
        overrides = {}
        for item in opts["set"]:
            if "=" not in item:
                raise CommandError(f"--set expects KEY=VALUE, got {item!r}")
            k, v = item.split("=", 1)
            overrides[k.strip()] = _parse(v)
        try:
            config = resolve_config(exp, overrides, opts["preset"])
        except ValidationError as exc:
            raise CommandError("invalid parameters: " + "; ".join(f"{k}: {m}" for k, m in exc.errors.items())) from None
        run = create_run(exp, config, seed=opts["seed"], device=opts["device"], source="cli", dispatch=False)
        sys.stderr.write(f"run {run.pk}: {decl.id}\n")
        run = execute_run(run.pk, console=sys.stderr)
        sys.stderr.write(f"\nrun {run.pk} {run.status}\n")
        if opts["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "id": run.pk,
                        "experiment": decl.id,
                        "status": run.status,
                        "config": run.config,
                        "seed": run.seed,
                        "device": run.device,
                        "summary": run.summary,
                        "error": run.error,
                    }
                )
            )
        else:
            self.stdout.write(json.dumps(run.summary, indent=1))
            if run.error:
                self.stderr.write(run.traceback)
        if run.status == "failed":
            raise SystemExit(1)


def _parse(text: str):  # type: ignore[no-untyped-def]
    """JSON when it parses (numbers, booleans, lists), else the raw string (lists may be '0.5,0.4')."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text

from django.core.management.base import BaseCommand

from apps.lab.reaper import reap_stale_runs


class Command(BaseCommand):
    help = "Mark running runs whose heartbeat is stale as failed ('worker lost')."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--after", type=float, default=None, help="seconds without heartbeat (default: settings)")

    def handle(self, *args, after=None, **options):  # type: ignore[no-untyped-def]
        ids = reap_stale_runs(after)
        self.stdout.write(f"reaped {len(ids)} runs: {ids}")

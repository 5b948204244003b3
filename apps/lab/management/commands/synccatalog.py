from django.core.management.base import BaseCommand

from apps.lab.catalog import sync_catalog


class Command(BaseCommand):
    help = "Sync Paper/Experiment/Preset rows from the paper apps' declarations (idempotent)."

    def handle(self, *args, **options):  # type: ignore[no-untyped-def]
        counts = sync_catalog()
        self.stdout.write(
            f"catalog: {counts['papers']} papers, {counts['experiments']} experiments, {counts['presets']} presets"
        )

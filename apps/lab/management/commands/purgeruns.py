from datetime import timedelta

from django.core.management.base import BaseCommand
from django.utils import timezone

from apps.lab.models import Run


class Command(BaseCommand):
    help = "Permanently delete soft-deleted runs (and their stored data and artifact files)."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument(
            "--older-than-days", type=float, default=0.0, help="only runs deleted at least this long ago"
        )

    def handle(self, *args, older_than_days=0.0, **options):  # type: ignore[no-untyped-def]
        cutoff = timezone.now() - timedelta(days=older_than_days)
        runs = Run.objects.filter(deleted_at__isnull=False, deleted_at__lte=cutoff)
        n = 0
        for run in runs:
            for art in run.artifacts.all():
                art.file.delete(save=False)
            run.delete()
            n += 1
        self.stdout.write(f"purged {n} runs")

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from apps.lab.exports import import_bundle


class Command(BaseCommand):
    help = "Restore a run bundle (zip from /api/runs/<id>/bundle/) as a new run on this instance."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("bundle")
        parser.add_argument("--owner", default=None, help="username to own the imported run")

    def handle(self, *args, bundle, owner=None, **options):  # type: ignore[no-untyped-def]
        user = None
        if owner:
            user = get_user_model().objects.filter(username=owner).first()
            if user is None:
                raise CommandError(f"no user {owner!r}")
        try:
            with open(bundle, "rb") as fh:
                run = import_bundle(fh.read(), owner=user)
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(f"cannot import {bundle}: {exc}") from None
        self.stdout.write(f"imported run {run.pk} ({run.experiment.key}, {run.status})")

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the embedded demo account (demo / the given password) if missing; print its credentials."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--username", default="demo")
        parser.add_argument("--password", default="paperlab-demo")

    def handle(self, *args, username="demo", password="paperlab-demo", **options):  # type: ignore[no-untyped-def]
        user, created = User.objects.get_or_create(username=username, defaults={"is_staff": True, "is_superuser": True})
        if created:
            user.set_password(password)
            user.save()
        self.stdout.write(f"demo account: {username} / {password}" + (" (created)" if created else ""))

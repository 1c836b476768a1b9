"""`slowave up`: migrate, then serve the admin (and later /api, /mcp) with uvicorn."""

from __future__ import annotations

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Apply migrations and serve Slowave's web interface on SLOWAVE_HOST:SLOWAVE_PORT."

    def handle(self, *args, **options) -> None:
        import uvicorn

        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        host, port = settings.SLOWAVE_HOST, settings.SLOWAVE_PORT
        self.stderr.write(f"Slowave admin on http://{host}:{port}/admin/ (create a login: "
                          "python manage.py createsuperuser)")
        uvicorn.run("slowave_site.asgi:application", host=host, port=port, log_level="warning")

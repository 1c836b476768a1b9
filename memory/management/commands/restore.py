"""`slowave restore PATH --yes`: replace the database with a checked backup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError
from django.utils import timezone

from memory.management.commands._common import SlowaveCommand
from memory.services.backup import database_restore


class Command(SlowaveCommand):
    help = (
        "Restore a backup over the current database (stop `slowave up`, workers and agents "
        "first). Refuses while a background pass holds a lock."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", help="a slowave-*.sqlite3.gz backup (or a plain .sqlite3)")
        parser.add_argument("--yes", action="store_true", help="confirm replacing the database")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["yes"]:
            raise CommandError(
                "restore replaces the current database; re-run with --yes", returncode=2
            )
        with self.progress("Restoring") as advance:
            result = database_restore(
                source=Path(options["path"]), now=timezone.now(), progress=advance
            )
        if self.as_json:
            self.emit({"ok": True, "data": result})
        else:
            self.stdout.write(f"Restored {result['restored']} from {result['from']}.")

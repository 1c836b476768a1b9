"""`slowave restore PATH --yes`: replace the database with a checked backup, keeping the old one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from memory.management.commands._common import SlowaveCommand
from memory.services.restore import database_restore


class Command(SlowaveCommand):
    help = (
        "Restore a backup over the current database, after checking that it is a sound Slowave "
        "store of a schema this version knows. The database it replaces is kept beside it as "
        "<db>.before-restore-<timestamp>. Refuses while slowave up, an MCP server, a worker or "
        "a background pass uses the store."
    )
    holds_store = False  # it takes the store for itself instead

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
        pending = cast(list[str], result["pending_migrations"])
        if pending:  # an older backup: bring its schema up to this version's
            call_command("migrate", verbosity=0, interactive=False)
        if self.as_json:
            self.emit({"ok": True, "data": result})
            return
        self.stdout.write(f"Restored {result['restored']} from {result['from']}.")
        if result["kept"]:
            self.stdout.write(
                f"The database it replaced is kept at {result['kept']} "
                "(restore that file to undo; delete it once you no longer need it)."
            )
        else:
            self.stdout.write("There was no database before, so none was kept.")
        if pending:
            self.stdout.write(f"Applied {len(pending)} migration(s) the backup predates.")

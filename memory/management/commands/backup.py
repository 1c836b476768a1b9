"""`slowave backup [--dir DIR] [--keep N]`: an online, checked, gzipped snapshot of the database."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.utils import timezone

from memory.errors import InvalidInput
from memory.management.commands._common import SlowaveCommand
from memory.services.backup import database_backup


class Command(SlowaveCommand):
    help = "Back up the SQLite database (online backup API, integrity-checked, atomic, rotated)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--dir", help="backup directory (default SLOWAVE_BACKUP_DIR)")
        parser.add_argument(
            "--keep", type=int, help="backups to keep (default SLOWAVE_BACKUP_KEEP)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["dir"] or settings.SLOWAVE_BACKUP_DIR).expanduser()
        keep = options["keep"] if options["keep"] is not None else settings.SLOWAVE_BACKUP_KEEP
        named = "--dir" if options["dir"] else "SLOWAVE_BACKUP_DIR"
        if directory.exists() and not directory.is_dir():
            raise InvalidInput.for_field_message(
                "dir", f"{named} {directory} is a file; backups go into a directory"
            )
        if directory.is_dir() and not os.access(directory, os.W_OK | os.X_OK):
            raise InvalidInput.for_field_message(
                "dir", f"{named} {directory} is not a directory Slowave can write"
            )
        try:
            with self.progress("Compressing backup") as advance:
                result = database_backup(
                    directory=directory, keep=keep, now=timezone.now(), progress=advance
                )
        except OSError as exc:  # e.g. a parent that is a file, or no write permission
            where = exc.filename or directory
            raise InvalidInput.for_field_message(
                "dir", f"cannot write a backup to {where}: {exc.strerror}"
            ) from None
        if self.as_json:
            self.emit({"ok": True, "data": result})
            return
        self.stdout.write(f"Backup written: {result['path']} ({result['bytes']} bytes)")
        for path in cast(list[str], result["removed"]):
            self.stdout.write(f"rotated out: {path}")

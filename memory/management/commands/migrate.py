"""`migrate`, one process at a time per database: Django's command under an inter-process lock.

Several processes may migrate the same fresh store at once (an editor starting three agent
windows, each running `mcp_serve`; `slowave up` beside them). Unserialised, all but one fail
with "table ... already exists". This command shadows Django's (apps take precedence over
`django.core`), so `manage.py migrate`, `slowave migrate` and every `call_command("migrate")`
take the lock; whoever waits computes its plan after the holder is done and finds nothing to
apply. The engine holds the lock (memory.engines): on SQLite a `flock` on a file beside the
database, on PostgreSQL a session-level advisory lock.
"""

from __future__ import annotations

from typing import Any

from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import connections

from memory.engines import storage_engine


class Command(DjangoMigrateCommand):
    def handle(self, *args: Any, **options: Any) -> None:
        with storage_engine(connections[options["database"]]).migration_lock():
            super().handle(*args, **options)

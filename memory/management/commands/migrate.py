"""`migrate`, one process at a time per database: Django's command under an inter-process lock.

Several processes may migrate the same fresh store at once (an editor starting three agent
windows, each running `mcp_serve`; `slowave up` beside them). Unserialised, all but one fail
with "table ... already exists". This command shadows Django's (apps take precedence over
`django.core`), so `manage.py migrate`, `slowave migrate` and every `call_command("migrate")`
take the lock; whoever waits computes its plan after the holder is done and finds nothing to
apply. SQLite: `flock` on a file beside the database, there only while held (the kernel
releases the lock if the holder dies). PostgreSQL: a session-level advisory lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

# Any fixed 64-bit key; it only has to differ from other advisory locks on the same server.
POSTGRES_LOCK_KEY = 0x5_10_3A_3E_0001


class Command(DjangoMigrateCommand):
    def handle(self, *args: Any, **options: Any) -> None:
        with migration_lock(connections[options["database"]]):
            super().handle(*args, **options)


@contextlib.contextmanager
def migration_lock(connection: BaseDatabaseWrapper) -> Iterator[None]:
    """Hold the database's migration lock, waiting for another process that holds it."""
    if connection.vendor == "postgresql":
        with _postgres_lock(connection):
            yield
    elif connection.vendor == "sqlite" and not _in_memory(connection):
        with _file_lock(Path(str(connection.settings_dict["NAME"]))):
            yield
    else:
        yield


def _in_memory(connection: BaseDatabaseWrapper) -> bool:
    # Django's SQLite wrapper has the check; the base class the stubs describe does not.
    sqlite: Any = connection
    return bool(sqlite.is_in_memory_db())


@contextlib.contextmanager
def _file_lock(database: Path) -> Iterator[None]:
    lock_path = database.with_name(database.name + ".migrate.lock")
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        # The holder before us deletes the file on its way out: a lock on that deleted
        # file excludes nobody, so start over on the path's current file.
        try:
            if os.stat(lock_path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        yield
    finally:
        lock_path.unlink(missing_ok=True)  # no file left beside the database
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def _postgres_lock(connection: BaseDatabaseWrapper) -> Iterator[None]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [POSTGRES_LOCK_KEY])
    try:
        yield
    finally:
        # A broken connection has released the lock with its session already.
        with contextlib.suppress(DatabaseError), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [POSTGRES_LOCK_KEY])

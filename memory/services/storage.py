"""The store's own health: can this process write it (checked once when a server starts)."""

from __future__ import annotations

from django.db import DatabaseError

from memory.engines import storage_engine
from memory.errors import StorageMissing, as_slowave_error


def storage_check_writable() -> None:
    """Raise StorageReadOnly (or the named fault) unless a write transaction can start.

    The engine probes without changing anything (memory.engines: SQLite rewrites
    `user_version` to its own value and rolls back; PostgreSQL asks whether transactions are
    read-only, as on a standby).
    """
    try:
        storage_engine().check_writable()
    except DatabaseError as exc:
        raise as_slowave_error(exc) from exc


def storage_check_in_place() -> None:
    """Raise StorageMissing once the SQLite file this process opened was deleted or replaced.

    Reads no table and opens no connection: cheap enough for every health check.
    """
    if not storage_engine().file_in_place():
        raise StorageMissing(
            "the database file was deleted or replaced under the running server; restart it"
        )

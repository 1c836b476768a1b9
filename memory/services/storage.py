"""The store's own health: can this process write it (checked once when a server starts)."""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from memory.errors import StorageMissing, StorageReadOnly, as_slowave_error


def storage_check_writable() -> None:
    """Raise StorageReadOnly (or the named fault) unless a write transaction can start.

    On SQLite the probe rewrites the schema cookie's neighbour, `user_version`, to its own
    value and rolls back: a read-only file, directory or mount refuses it, a writable store
    is left byte for byte as it was. On PostgreSQL it asks whether transactions are read-only
    (a standby, or default_transaction_read_only).
    """
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute("PRAGMA user_version")
                version = int(cursor.fetchone()[0])
                cursor.execute("BEGIN IMMEDIATE")
                try:
                    cursor.execute(f"PRAGMA user_version = {version + 1}")
                finally:
                    cursor.execute("ROLLBACK")
            else:
                cursor.execute("SELECT current_setting('transaction_read_only')")
                if cursor.fetchone()[0] == "on":
                    raise StorageReadOnly("the database only accepts read-only transactions")
    except DatabaseError as exc:
        raise as_slowave_error(exc) from exc


def storage_check_in_place() -> None:
    """Raise StorageMissing once the SQLite file this process opened was deleted or replaced.

    Reads no table and opens no connection: cheap enough for every health check.
    """
    in_place = getattr(connections[DEFAULT_DB_ALIAS], "file_in_place", None)  # SQLite only
    if in_place is not None and not in_place():
        raise StorageMissing(
            "the database file was deleted or replaced under the running server; restart it"
        )

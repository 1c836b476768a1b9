"""The database engine in use, behind one small interface: one module per engine.

Engines: `sqlite` (one file: a flock beside it, holder notes, WAL, PRAGMA probes, sqlite-vec)
and `postgresql` (a server: advisory locks, sequences, a read-only standby, pgvector tables).
`storage_engine` picks one from the connection's vendor, here and nowhere else outside the
migrations (tests/test_vendor_checks.py fails on a vendor read anywhere else); the lexical and
vector packages ask the engine which of their backends it holds. Only what differs between
engines lives here: the callers (services, `migrate`, doctor) keep what is the same everywhere.
The reads ranking runs on the memory tables are the engines' too (`memory_rows` and the rest,
memory/engines/ranking.py: the statements once, each engine's list binding and driver types in
its module), so memory.retrieval holds no SQL of its own.
One parity test runs every operation on both engines (tests/memory/test_storage_engines.py).
Adding an engine is one module here, its lexical module and its tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model

from memory.engines.postgresql import PostgresqlEngine
from memory.engines.sqlite import SqliteEngine

# One (name, status, detail) line of `slowave doctor` (memory.services.doctor makes it a Check).
CheckRow = tuple[str, str, str]


class StorageEngine(Protocol):
    name: str  # what `slowave doctor` and the dashboard report as the engine
    lexical: str  # the name of the memory.lexical engine this database holds

    def vector_default(self) -> str:
        """The vector backend `SLOWAVE_VECTOR_BACKEND=auto` resolves to on this database."""
        ...

    def pgvector_tables(self) -> bool:
        """The pgvector tables exist (migration 0012 found or created the extension)."""
        ...

    def database_file(self) -> Path | None:
        """The store's file (backups, restore, holder notes, the migration lock); None on a
        server."""
        ...

    def file_in_place(self) -> bool:
        """False once the file this process opened was deleted or replaced under it."""
        ...

    def check_writable(self) -> None:
        """Raise (DatabaseError or StorageReadOnly) unless a write transaction can start."""
        ...

    def migration_lock(self) -> AbstractContextManager[None]:
        """Held while one process migrates; others wait for it."""
        ...

    def reset_sequences(self, models: Sequence[type[Model]]) -> None:
        """Let new rows of `models` follow the ids a load inserted explicitly."""
        ...

    def health(self, *, quick_check: bool) -> dict[str, Any]:
        """The engine's own figures for the dashboard's health panel (sizes, journal mode)."""
        ...

    def checks(self) -> list[CheckRow]:
        """Doctor's checks of what this engine needs (extensions, journal mode)."""
        ...

    def integrity(self) -> list[str] | None:
        """Damage the engine's own check finds (empty: none); None where it has none to run."""
        ...

    # The reads of ranking (memory/engines/ranking.py says what each returns).
    def memory_rows(self, ids: Sequence[int], statuses: Sequence[str]) -> list[tuple[Any, ...]]: ...

    def memories_at(
        self, sessions: Sequence[str], seqs: Sequence[int]
    ) -> list[tuple[int, str, int]]: ...

    def association_edges(
        self, ids: Sequence[int], min_weight: float
    ) -> list[tuple[int, int, float]]: ...

    def promoted_scopes(self, scope: str, statuses: Sequence[str]) -> set[tuple[str, int]]: ...

    def source_events(
        self, ids: Sequence[int]
    ) -> dict[int, tuple[int, datetime, datetime | None, str]]: ...

    def memories_in_status(self, ids: Sequence[int], status: str) -> set[int]: ...

    def memory_sessions(self, ids: Sequence[int], statuses: Sequence[str]) -> dict[int, str]: ...

    def session_lengths(self, sessions: Sequence[str]) -> dict[str, int]: ...

    def scope_facts(
        self, *, scope: str, session_cap: int, statuses: Sequence[str], imported: str
    ) -> tuple[int, str | None, bool, int]: ...


_ENGINES: dict[str, type[SqliteEngine] | type[PostgresqlEngine]] = {
    "sqlite": SqliteEngine,
    "postgresql": PostgresqlEngine,
}


def storage_engine(db: BaseDatabaseWrapper | None = None) -> StorageEngine:
    """The engine of `db` (the default connection unless named)."""
    db = connections[DEFAULT_DB_ALIAS] if db is None else db
    engine = _ENGINES.get(db.vendor)
    if engine is None:
        raise ImproperlyConfigured(
            f"Slowave runs on SQLite or PostgreSQL, not {db.vendor}: unset DATABASE_URL for "
            "SQLite, or point it at PostgreSQL"
        )
    return engine(db)

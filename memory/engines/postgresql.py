"""PostgreSQL: the store is a server's database (tsvector for lexical search, pgvector or numpy
for vectors).

What only PostgreSQL does: a session-level advisory lock while one process migrates, sequences
to move past the ids a load inserted, and a standby (or `default_transaction_read_only`) that
refuses writes. No file: backups are pg_dump's job, the server checks its own pages, and
`slowave restore` and the holder registry leave it alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from django.core.management.color import no_style
from django.db import DatabaseError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model

from memory.engines.ranking import EMBEDDING, PASSAGES, PROVENANCE, RankingReads, blob, decoded
from memory.errors import StorageReadOnly

# Any fixed 64-bit key; it only has to differ from other advisory locks on the same server.
MIGRATION_LOCK_KEY = 0x5_10_3A_3E_0001


class PostgresqlEngine(RankingReads):
    name = "postgresql"
    lexical = "tsvector"
    # Kept by triggers on the memories as they are written (migration 0016).
    eligible = (
        "(SELECT COALESCE(SUM(n), 0) FROM memory_scope_count WHERE scope = %(scope)s "
        "AND status IN (%(active)s, %(stale)s))"
    )

    def __init__(self, db: BaseDatabaseWrapper) -> None:
        self.db = db

    def vector_default(self) -> str:
        return "pgvector" if self.pgvector_tables() else "numpy"

    def pgvector_tables(self) -> bool:
        with self.db.cursor() as cursor:
            cursor.execute("SELECT to_regclass('pgv_memory') IS NOT NULL")
            (found,) = cursor.fetchone()
        return bool(found)

    def database_file(self) -> Path | None:
        return None

    def file_in_place(self) -> bool:
        return True

    def check_writable(self) -> None:
        """A standby, or default_transaction_read_only, makes every transaction read-only."""
        with self.db.cursor() as cursor:
            cursor.execute("SELECT current_setting('transaction_read_only')")
            if cursor.fetchone()[0] == "on":
                raise StorageReadOnly("the database only accepts read-only transactions")

    @contextlib.contextmanager
    def migration_lock(self) -> Iterator[None]:
        with self.db.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK_KEY])
        try:
            yield
        finally:
            # A broken connection has released the lock with its session already.
            with contextlib.suppress(DatabaseError), self.db.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK_KEY])

    def reset_sequences(self, models: Sequence[type[Model]]) -> None:
        statements = self.db.ops.sequence_reset_sql(no_style(), list(models))
        with self.db.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """One array parameter, whatever the length: one statement text for every list."""
        return f"{column} = ANY(%s)", [list(values)]

    def chunks(self, values: Sequence[Any]) -> Iterator[Sequence[Any]]:
        if values:
            yield values

    def row_values(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """Times come back aware; Django has the driver hand jsonb back as text, and bytea
        may come as a memoryview."""
        values = list(row)
        values[PROVENANCE] = decoded(values[PROVENANCE])
        values[EMBEDDING] = blob(values[EMBEDDING])
        values[PASSAGES] = blob(values[PASSAGES])
        return tuple(values)

    def health(self, *, quick_check: bool) -> dict[str, Any]:
        return {}

    def checks(self) -> list[tuple[str, str, str]]:
        return [("database", "ok", "postgresql (sqlite checks skipped)")]

    def integrity(self) -> list[str] | None:
        return None

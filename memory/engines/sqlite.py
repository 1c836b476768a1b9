"""SQLite: the store is one file (WAL mode, sqlite-vec loaded on every connection, FTS5).

What only SQLite does: a file to back up and register holders beside, a flock beside that file
while one process migrates, a write probe on the schema cookie's neighbour, `quick_check`, and
doctor's checks of the extensions and journal mode. Its AUTOINCREMENT keys follow explicit ids
by themselves, so a load has no sequences to reset.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model

from memory.engines.ranking import CREATED_AT, OCCURRED_AT, PROVENANCE, RankingReads, decoded, utc

CHUNK = 900  # values per IN (...) list, well under SQLite's variable limit


class SqliteEngine(RankingReads):
    name = "sqlite"
    lexical = "fts5"

    def __init__(self, db: BaseDatabaseWrapper) -> None:
        # Django's SQLite wrapper (ours: slowave_site.db); the base class the stubs describe
        # lacks its `is_in_memory_db` and our `file_in_place`.
        self.db: Any = db

    def vector_default(self) -> str:
        return "sqlite-vec"

    def pgvector_tables(self) -> bool:
        return False

    def database_file(self) -> Path | None:
        return Path(self.db.settings_dict["NAME"])

    def file_in_place(self) -> bool:
        # Django's own SQLite backend (no file check) counts as in place.
        in_place = getattr(self.db, "file_in_place", None)
        return in_place is None or bool(in_place())

    def check_writable(self) -> None:
        """Rewrite `user_version` to its own value and roll back: a read-only file, directory
        or mount refuses it, a writable store is left byte for byte as it was."""
        with self.db.cursor() as cursor:
            cursor.execute("PRAGMA user_version")
            version = int(cursor.fetchone()[0])
            cursor.execute("BEGIN IMMEDIATE")
            try:
                cursor.execute(f"PRAGMA user_version = {version + 1}")
            finally:
                cursor.execute("ROLLBACK")

    @contextlib.contextmanager
    def migration_lock(self) -> Iterator[None]:
        """`flock` on a file beside the database, there only while held (the kernel releases
        the lock if the holder dies); an in-memory database has no other process to wait for."""
        if self.db.is_in_memory_db():
            yield
            return
        database = Path(str(self.db.settings_dict["NAME"]))
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

    def reset_sequences(self, models: Sequence[type[Model]]) -> None:
        return None

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} IN ({', '.join(['%s'] * len(values))})", list(values)

    def chunks(self, values: Sequence[Any]) -> Iterator[Sequence[Any]]:
        for start in range(0, len(values), CHUNK):
            yield values[start : start + CHUNK]

    def row_values(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """Times come back naive (parsed by their declared type, or text in an expression) and
        JSON as text; blobs are bytes already."""
        values = list(row)
        values[OCCURRED_AT] = utc(values[OCCURRED_AT])
        values[CREATED_AT] = utc(values[CREATED_AT])
        values[PROVENANCE] = decoded(values[PROVENANCE])
        return tuple(values)

    def _scalar(self, sql: str) -> Any:
        with self.db.cursor() as cursor:
            cursor.execute(sql)
            row = cursor.fetchone()
        return row[0] if row else None

    def health(self, *, quick_check: bool) -> dict[str, Any]:
        path = Path(self.db.settings_dict["NAME"])
        wal = Path(f"{path}-wal")
        health: dict[str, Any] = {
            "file_bytes": path.stat().st_size if path.exists() else 0,
            "wal_bytes": wal.stat().st_size if wal.exists() else 0,
            "journal_mode": self._scalar("PRAGMA journal_mode"),
            "sqlite_version": self._scalar("SELECT sqlite_version()"),
            "sqlite_vec_version": self._scalar("SELECT vec_version()"),
        }
        if quick_check:
            health["quick_check"] = self._scalar("PRAGMA quick_check")
        return health

    def checks(self) -> list[tuple[str, str, str]]:
        checks = []
        # pysqlite3.dbapi2 here; the stdlib module cannot load sqlite-vec
        library = self.db.Database.__name__
        try:
            vec = self._scalar("SELECT vec_version()")
            version = self._scalar("SELECT sqlite_version()")
            checks.append(("sqlite", "ok", f"SQLite {version} via {library}, sqlite-vec {vec}"))
        except Exception as exc:  # a missing extension is exactly what this check reports
            checks.append(("sqlite", "fail", f"sqlite-vec did not load: {exc}"))
        try:
            with self.db.cursor() as cursor:
                cursor.execute("CREATE VIRTUAL TABLE temp.doctor_fts USING fts5(x)")
                cursor.execute("DROP TABLE temp.doctor_fts")
            checks.append(("fts5", "ok", "FTS5 available"))
        except Exception as exc:
            checks.append(("fts5", "fail", f"FTS5 unavailable: {exc}"))
        mode = self._scalar("PRAGMA journal_mode")
        checks.append(("wal", "ok" if mode == "wal" else "fail", f"journal_mode={mode}"))
        return checks

    def integrity(self) -> list[str] | None:
        """SQLite's quick_check: the damaged b-tree pages it names (raises on worse)."""
        with self.db.cursor() as cursor:
            cursor.execute("PRAGMA quick_check")
            return [row[0] for row in cursor.fetchall() if row[0] != "ok"]

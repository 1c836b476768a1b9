"""`slowave restore`: replace the SQLite store with a checked backup, keeping the one it replaces.

Nothing is replaced until the file has unpacked (gzip or plain), proved to be a SQLite database
that passes `integrity_check`, and proved to be a Slowave store of a schema this version knows:
it has Slowave's tables, and every `memory` migration it records is one this code has. Nobody
may be using the store meanwhile (`holders.store_exclusive`), nor may a live pass hold a lease.
The replaced database stays beside the new one as `<db>.before-restore-<timestamp>`.
"""

from __future__ import annotations

import gzip
import os
import zlib
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pysqlite3.dbapi2 as sqlite
from django.db import DatabaseError, connections
from django.db.migrations.loader import MigrationLoader

from memory.errors import InvalidInput, StorageBusy, StorageError
from memory.models import PassLock
from memory.services.backup import Progress, copy_stream, database_path, sqlite_connect
from memory.services.holders import holder_describe, holder_gone, store_exclusive

SQLITE_HEADER = b"SQLite format 3\x00"
GZIP_MAGIC = b"\x1f\x8b"
# Tables every Slowave store has had since its first migration.
STORE_TABLES = ("django_migrations", "memory_memory", "memory_session", "memory_passlock")


def _refuse(source: Path, reason: str) -> InvalidInput:
    return InvalidInput.for_field_message(
        "path", f"{source} is not a readable Slowave backup: {reason}; nothing was restored"
    )


def _check_file(source: Path) -> bool:
    """Refuse what cannot be a backup before touching anything; True if it is gzipped."""
    if not source.exists():
        raise InvalidInput.for_field_message(
            "path", f"no such backup file: {source}; nothing was restored"
        )
    if source.is_dir():
        raise _refuse(source, "it is a directory; give the path of a slowave-*.sqlite3.gz file")
    if not source.is_file():
        raise _refuse(source, "it is not a regular file")
    try:
        with source.open("rb") as probe:
            head = probe.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise _refuse(source, f"it cannot be read ({exc.strerror or exc})") from None
    if not head:
        raise _refuse(source, "the file is empty (0 bytes)")
    if head.startswith(GZIP_MAGIC):
        return True
    if head != SQLITE_HEADER:
        raise _refuse(source, "it is neither gzip-compressed nor a SQLite database")
    wal = Path(f"{source}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise _refuse(
            source,
            f"its write-ahead log {wal} holds changes a copy of the file would lose; "
            "restore a `slowave backup` file instead, or checkpoint it first "
            "(sqlite3 FILE 'PRAGMA wal_checkpoint(TRUNCATE)')",
        )
    return False


def _unpack(source: Path, zipped: bool, tmp: Path, progress: Progress | None) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the store stays private
    try:
        with os.fdopen(fd, "wb") as dst:
            if zipped:
                with gzip.open(source, "rb") as src:
                    copy_stream(src, dst, progress)
            else:
                with source.open("rb") as plain:
                    copy_stream(plain, dst, progress)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise _refuse(source, f"its gzip data is damaged ({exc})") from None
    except OSError as exc:
        raise StorageError(f"restoring {source} failed: {exc}; nothing was restored") from None
    with tmp.open("rb") as unpacked:
        head = unpacked.read(len(SQLITE_HEADER))
    if not head:
        raise _refuse(source, "it unpacks to nothing (an empty gzip file)")
    if head != SQLITE_HEADER:
        raise _refuse(source, "it unpacks to something that is not a SQLite database")


def known_migrations() -> list[str]:
    """The `memory` app's migrations this code has, oldest first."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return sorted(name for app, name in loader.disk_migrations if app == "memory")


def _check_store(source: Path, candidate: Path) -> list[str]:
    """Refuse anything but a sound Slowave store this version can run; its pending migrations."""
    try:
        with closing(sqlite_connect(candidate)) as conn:
            verdict = "; ".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check"))
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            applied: set[str] = set()
            if "django_migrations" in tables:
                query = "SELECT name FROM django_migrations WHERE app = 'memory'"
                applied = {r[0] for r in conn.execute(query)}
    except sqlite.DatabaseError as exc:
        raise _refuse(source, f"SQLite cannot read it ({exc})") from None
    if verdict != "ok":
        raise _refuse(source, f"it failed integrity_check ({verdict[:300]})")
    missing = [t for t in STORE_TABLES if t not in tables]
    if missing:
        found = ", ".join(sorted(t for t in tables if not t.startswith("sqlite_"))[:8])
        raise _refuse(
            source,
            f"it is a SQLite database but not a Slowave store (no {', '.join(missing)}; "
            f"tables found: {found or 'none'})",
        )
    known = known_migrations()
    if not applied:
        raise _refuse(source, "it records no Slowave (memory) migrations, so its schema is unknown")
    newer = sorted(applied - set(known))
    if newer:
        raise _refuse(
            source,
            f"it was written by a newer Slowave: its schema has migration {', '.join(newer)}, "
            f"which this version does not know (its latest is {known[-1]}); upgrade Slowave "
            "and restore again",
        )
    return [name for name in known if name not in applied]


def _check_leases(now: datetime) -> None:
    try:
        leases = list(PassLock.objects.filter(expires_at__gt=now).exclude(holder=""))
    except DatabaseError:
        return  # a store too broken to read holds no lease worth waiting for
    for held in leases:
        if not holder_gone(held.holder):
            raise StorageBusy(
                f"background pass {held.name} holds its lock until {held.expires_at:%H:%M:%S} "
                f"UTC ({holder_describe(held.holder)}); stop the worker (and slowave up) and "
                "retry; nothing was restored"
            )


def _keep_name(target: Path, now: datetime) -> Path:
    stem = f"{target.name}.before-restore-{now:%Y%m%d_%H%M%S}"
    kept, n = target.with_name(stem), 2
    while kept.exists():
        kept, n = target.with_name(f"{stem}-{n}"), n + 1
    return kept


def _set_aside(target: Path, now: datetime) -> Path | None:
    """Move the current database out of the way, whole: its WAL is folded in first, and it
    leaves WAL mode, so the kept file stands alone (copying it or opening it read-only works)."""
    if not target.exists():
        return None
    try:
        with closing(sqlite.connect(str(target), timeout=2)) as conn:
            conn.execute("PRAGMA journal_mode=DELETE")
    except sqlite.OperationalError as exc:
        if "locked" in str(exc):  # a program Slowave does not know of has it open
            raise StorageBusy(
                f"{target} is open in another program (SQLite reports it locked); close it "
                "and retry; nothing was restored"
            ) from None
    except sqlite.DatabaseError:
        pass  # a damaged store is moved aside as it is, log and all
    kept = _keep_name(target, now)
    os.replace(target, kept)
    wal = Path(f"{target}-wal")
    if wal.exists() and wal.stat().st_size > 0:  # it could not leave WAL mode: keep its log with it
        os.replace(wal, Path(f"{kept}-wal"))
    for suffix in ("-wal", "-shm"):
        # Frames of the old database's WAL would be replayed onto the restored file.
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    return kept


def database_restore(
    *, source: Path, now: datetime, progress: Progress | None = None
) -> dict[str, object]:
    """Replace the database with a checked backup; the old one is kept beside it.

    Refuses, changing nothing, while another process uses the store or a pass holds a lease.
    """
    target = database_path()
    source = Path(source).expanduser()
    zipped = _check_file(source)
    with store_exclusive(database=target):
        if target.exists():  # (asking a missing store would create an empty one)
            _check_leases(now)
        tmp = target.parent / f".{target.name}.restore-tmp"
        try:
            _unpack(source, zipped, tmp, progress)
            pending = _check_store(source, tmp)
            connections.close_all()
            try:
                kept = _set_aside(target, now)
            except OSError as exc:
                raise StorageError(
                    f"could not set {target} aside: {exc}; nothing was restored"
                ) from None
            try:
                os.replace(tmp, target)
            except OSError as exc:
                if kept is not None:
                    os.replace(kept, target)
                raise StorageError(
                    f"could not put the backup in place: {exc}; nothing was restored"
                ) from None
        finally:
            for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
                leftover.unlink(missing_ok=True)
    return {
        "restored": str(target),
        "from": str(source),
        "kept": str(kept) if kept else None,
        "pending_migrations": pending,
    }

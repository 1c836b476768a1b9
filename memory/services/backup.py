"""Backups of the SQLite database (spec §11: `slowave backup`; restores live in restore.py).

Backups use SQLite's online backup API, so agents may keep writing meanwhile; every file is
checked with `PRAGMA integrity_check` before it is published by an atomic rename, and no
temporary file is left behind on failure.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Callable
from contextlib import closing, suppress
from datetime import datetime
from pathlib import Path

import pysqlite3.dbapi2 as sqlite
import sqlite_vec

from memory.engines import storage_engine
from memory.errors import InvalidInput, StorageError

PATTERN = "slowave-*.sqlite3.gz"
CHUNK = 1024 * 1024
Progress = Callable[[int], None]


def database_path() -> Path:
    path = storage_engine().database_file()
    if path is None:
        raise StorageError("backups of PostgreSQL are pg_dump's job: run pg_dump on DATABASE_URL")
    return path


def sqlite_connect(path: Path) -> sqlite.Connection:
    conn = sqlite.connect(str(path), timeout=30)
    # The vec0 tables are virtual: checking them needs the extension their module lives in.
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


def integrity_check(path: Path) -> str:
    with closing(sqlite_connect(path)) as conn:
        rows = conn.execute("PRAGMA integrity_check").fetchall()
    return "; ".join(str(r[0]) for r in rows)


def copy_stream(src: object, dst: object, progress: Progress | None) -> None:
    while chunk := src.read(CHUNK):  # type: ignore[attr-defined]
        dst.write(chunk)  # type: ignore[attr-defined]
        if progress:
            progress(len(chunk))


def _target_name(directory: Path, now: datetime) -> Path:
    stem = f"slowave-{now:%Y%m%d_%H%M%S}"
    target, n = directory / f"{stem}.sqlite3.gz", 2
    while target.exists():  # two backups in one second keep both
        target, n = directory / f"{stem}-{n}.sqlite3.gz", n + 1
    return target


_NAME = re.compile(r"slowave-(\d{8}_\d{6})(?:-(\d+))?\.sqlite3\.gz")


def _age(path: Path) -> tuple[str, int]:
    """Sort key, oldest first: the timestamp in the name, then the same-second counter (a plain
    name is the first of its second; plain name order would put `-2` before it)."""
    match = _NAME.fullmatch(path.name)
    if match is None:
        return path.name, 0
    return match.group(1), int(match.group(2) or 1)


def database_backup(
    *, directory: Path, keep: int, now: datetime, progress: Progress | None = None
) -> dict[str, object]:
    """Snapshot → integrity_check → gzip → atomic rename → rotation to the newest `keep`."""
    if keep < 1:
        raise InvalidInput.for_field("keep", "keep must be at least 1")
    source = database_path()
    directory = Path(directory)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = _target_name(directory, now)
    raw, packed = directory / f".{target.name}.snapshot", directory / f".{target.name}.tmp"
    try:
        with closing(sqlite_connect(source)) as src, closing(sqlite.connect(str(raw))) as dst:
            src.backup(dst)  # one step: a consistent snapshot even while writers carry on
        verdict = integrity_check(raw)
        if verdict != "ok":
            raise StorageError(f"the snapshot failed integrity_check: {verdict}")
        with raw.open("rb") as plain, gzip.open(packed, "wb", compresslevel=6) as zipped:
            copy_stream(plain, zipped, progress)
        os.replace(packed, target)
    finally:
        for leftover in (raw, packed):
            with suppress(FileNotFoundError):
                leftover.unlink()
    removed = backup_rotate(directory=directory, keep=keep)
    return {
        "path": str(target),
        "bytes": target.stat().st_size,
        "removed": [str(p) for p in removed],
    }


def backup_rotate(*, directory: Path, keep: int) -> list[Path]:
    backups = sorted(Path(directory).glob(PATTERN), key=_age)
    doomed = backups[:-keep] if keep > 0 else backups
    for path in doomed:
        path.unlink()
    return doomed

"""Backups (memory/services/backup.py) and restore's refusals (restore.py) on the real SQLite
test database, in this process.

A backup is a gzipped SQLite copy that passes integrity_check and holds what was committed;
rotation keeps the newest. A restore that succeeds would swap out the database this process
runs on, so only its refusals are tested here (each must leave the store as it was); the CLI
tests (tests/cli/test_backup_restore.py, test_restore_safeguards.py) restore for real.
"""

from __future__ import annotations

import gzip
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.utils import timezone

from memory.errors import InvalidInput
from memory.models import Memory
from memory.services.accounts import admin_create
from memory.services.backup import database_backup, database_path, integrity_check
from memory.services.restore import database_restore
from memory.services.tokens import token_create
from tests.factories import seeded_scope

pytestmark = pytest.mark.django_db
# A backup reads the file through its own connection, so it sees committed rows only: these
# tests commit rows of tables pytest-django can empty afterwards (a user and an API token).
# Sessions and events cannot be committed here: the events table is append-only.
committing = pytest.mark.django_db(transaction=True)

FACTS = ("Invoices are generated on the first day of each month.", "Plants get water on Fridays.")
NOON = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def _unpacked(backup: Path, into: Path) -> Path:
    plain = into / "copy.sqlite3"
    with gzip.open(backup, "rb") as packed:
        plain.write_bytes(packed.read())
    return plain


def _commit_a_token() -> str:
    user = admin_create(username="ann", email="ann@example.org", password="a long passphrase")
    row, _ = token_create(username=user, name="laptop", now=NOON)
    return row.token_hash


@committing
def test_a_backup_is_a_sound_sqlite_copy_of_what_was_committed(tmp_path):
    token_hash = _commit_a_token()
    directory = tmp_path / "backups"

    made = database_backup(directory=directory, keep=3, now=NOON)

    backup = Path(made["path"])
    assert backup.name == "slowave-20260301_120000.sqlite3.gz"
    assert backup.parent == directory and made["bytes"] == backup.stat().st_size
    assert made["removed"] == []
    assert sorted(p.name for p in directory.iterdir()) == [backup.name]  # no temporary left
    copy = _unpacked(backup, tmp_path)
    assert integrity_check(copy) == "ok"
    with closing(sqlite3.connect(copy)) as conn:
        rows = conn.execute("SELECT name, token_hash FROM memory_apitoken").fetchall()
        users = conn.execute("SELECT username, is_superuser FROM auth_user").fetchall()
    assert rows == [("laptop", token_hash)] and users == [("ann", 1)]


def test_backups_in_one_second_are_all_kept_and_rotation_keeps_the_newest(tmp_path):

    paths = [Path(database_backup(directory=tmp_path, keep=5, now=NOON)["path"]) for _ in range(3)]
    assert [p.name for p in paths] == [
        "slowave-20260301_120000.sqlite3.gz",
        "slowave-20260301_120000-2.sqlite3.gz",
        "slowave-20260301_120000-3.sqlite3.gz",
    ]

    later = database_backup(directory=tmp_path, keep=2, now=NOON.replace(minute=5))

    assert later["removed"] == [str(p) for p in paths[:2]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [paths[2].name, Path(later["path"]).name]
    )


def test_keep_must_be_at_least_one(tmp_path):
    with pytest.raises(InvalidInput) as refused:
        database_backup(directory=tmp_path / "b", keep=0, now=NOON)

    assert refused.value.field_errors[0]["path"] == "keep"
    assert not (tmp_path / "b").exists()


def _not_a_store(tmp_path: Path) -> Path:
    path = tmp_path / "other.sqlite3"
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    return path


def _from_the_future(tmp_path: Path) -> Path:
    made = database_backup(directory=tmp_path / "b", keep=1, now=NOON)
    copy = _unpacked(Path(made["path"]), tmp_path)
    with closing(sqlite3.connect(copy)) as conn, conn:
        conn.execute(
            "INSERT INTO django_migrations (app, name, applied) "
            "VALUES ('memory', '9999_from_the_future', '2030-01-01')"
        )
    return copy


def _gzipped_text(tmp_path: Path) -> Path:
    path = tmp_path / "notes.sqlite3.gz"
    with gzip.open(path, "wb") as packed:
        packed.write(b"these are not the pages of a database")
    return path


def _file(tmp_path: Path, name: str, data: bytes) -> Path:
    (tmp_path / name).write_bytes(data)
    return tmp_path / name


REFUSALS = {
    "missing": (lambda t: t / "nope.sqlite3.gz", "no such backup file"),
    "directory": (lambda t: t, "it is a directory"),
    "empty": (lambda t: _file(t, "empty.gz", b""), "the file is empty"),
    "text": (lambda t: _file(t, "x.txt", b"hello world, not sqlite"), "neither gzip"),
    "gzipped text": (_gzipped_text, "unpacks to something that is not a SQLite database"),
    "other database": (_not_a_store, "not a Slowave store"),
    "newer schema": (_from_the_future, "written by a newer Slowave"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_restore_refuses_what_is_not_a_known_slowave_backup_and_changes_nothing(tmp_path, case):
    make, message = REFUSALS[case]
    seeded_scope(*FACTS)
    source = make(tmp_path)
    database = database_path()
    before = sorted(p.name for p in database.parent.iterdir())

    with pytest.raises(InvalidInput) as refused:
        database_restore(source=source, now=timezone.now())

    assert message in refused.value.message and "nothing was restored" in refused.value.message
    assert refused.value.field_errors[0]["path"] == "path"
    assert sorted(p.name for p in database.parent.iterdir()) == before
    assert Memory.objects.filter(content__in=FACTS).count() == len(FACTS)

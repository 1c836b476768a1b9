"""`slowave restore` never destroys the store (issue 16): it refuses anything that is not a sound
Slowave store of a schema this version knows, keeps the database it replaces, and refuses while
a server uses the store. Every refusal exits non-zero with one clear line and no traceback."""

from __future__ import annotations

import gzip
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.admin.live import free_port
from tests.cli.runner import ENTRY, REPO_ROOT, cli_env, slowave
from tests.e2e_support import spawn_server

pytestmark = pytest.mark.timeout(120)


def _db(home: Path) -> Path:
    return home / "slowave.sqlite3"


def _fingerprint(home: Path) -> tuple[Any, ...]:
    """What the live store holds (file bytes change with WAL checkpoints, content must not)."""
    with closing(sqlite3.connect(f"file:{_db(home)}?mode=ro", uri=True, timeout=10)) as conn:
        return (
            conn.execute("SELECT count(*) FROM memory_memory").fetchone()[0],
            conn.execute("SELECT count(*) FROM memory_session").fetchone()[0],
            conn.execute("SELECT group_concat(status, ',') FROM memory_memory").fetchone()[0],
        )


def _kept(home: Path) -> list[Path]:
    return sorted(home.glob("slowave.sqlite3.before-restore-*"))


def _backup(home: Path, directory: Path) -> Path:
    made = slowave(home, "--json", "backup", "--dir", str(directory))
    assert made.code == 0, made.err
    return Path(made.json()["data"]["path"])


def _status(db: Path, memory_id: str) -> str:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        row = conn.execute(
            "SELECT status FROM memory_memory WHERE id = ?", (int(memory_id.split("_")[-1]),)
        ).fetchone()
    return str(row[0])


@pytest.fixture(scope="module")
def bad_files(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One of each kind of file that is not a backup this version can restore."""
    tmp = tmp_path_factory.mktemp("bad-backups")
    good = _backup(home, tmp / "backups")
    (tmp / "empty.gz").write_bytes(b"")
    (tmp / "empty-gzip.gz").write_bytes(gzip.compress(b""))
    with closing(sqlite3.connect(tmp / "foreign.sqlite3")) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    with closing(sqlite3.connect(tmp / "blank.sqlite3")) as conn:  # a SQLite header, no tables
        conn.execute("PRAGMA user_version = 1")
    (tmp / "garbage.bin").write_bytes(os.urandom(4096).replace(b"\x1f\x8b", b"xx"))
    (tmp / "garbage.sqlite3.gz").write_bytes(gzip.compress(b"definitely not a database" * 100))
    (tmp / "truncated.sqlite3.gz").write_bytes(good.read_bytes()[:3000])
    newer = tmp / "newer.sqlite3"
    newer.write_bytes(gzip.decompress(good.read_bytes()))
    with closing(sqlite3.connect(newer)) as conn, conn:
        conn.execute(
            "INSERT INTO django_migrations (app, name, applied) "
            "VALUES ('memory', '0999_from_the_future', '2030-01-01')"
        )
    (tmp / "a-directory").mkdir()
    return tmp


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("empty.gz", "the file is empty (0 bytes)"),
        ("empty-gzip.gz", "unpacks to nothing (an empty gzip file)"),
        ("foreign.sqlite3", "not a Slowave store (no django_migrations, memory_memory"),
        ("foreign.sqlite3", "tables found: invoices"),
        ("blank.sqlite3", "tables found: none"),
        ("garbage.bin", "neither gzip-compressed nor a SQLite database"),
        ("garbage.sqlite3.gz", "unpacks to something that is not a SQLite database"),
        ("truncated.sqlite3.gz", "its gzip data is damaged"),
        ("newer.sqlite3", "written by a newer Slowave: its schema has migration 0999_from_the"),
        ("a-directory", "is a directory"),
        ("missing.gz", "no such backup file"),
    ],
)
def test_it_refuses_what_is_not_a_slowave_store_and_leaves_the_store_alone(
    home: Path, seeded: dict[str, Any], bad_files: Path, name: str, message: str
) -> None:
    before = _fingerprint(home)
    result = slowave(home, "restore", str(bad_files / name), "--yes")
    assert result.code == 1, (result.code, result.out, result.err)
    assert message in result.err and "nothing was restored" in result.err, result.err
    assert "Traceback" not in result.err and "Restored" not in result.out, result.err
    assert _fingerprint(home) == before
    assert _kept(home) == [] and not list(home.glob(".*restore-tmp*"))


def test_it_reports_a_refusal_as_invalid_input_in_json(home: Path, bad_files: Path) -> None:
    refused = slowave(home, "--json", "restore", str(bad_files / "empty.gz"), "--yes")
    assert refused.code == 1 and refused.json()["error"]["code"] == "invalid_input"


def test_it_restores_a_good_backup_and_keeps_the_replaced_database_beside_it(
    home: Path, seeded: dict[str, Any], tmp_path: Path
) -> None:
    backup = _backup(home, tmp_path)
    target = seeded["shown"][1]
    original = _status(_db(home), target)
    assert slowave(home, "forget", target, "--reason", "after the backup").code == 0

    restored = slowave(home, "restore", str(backup), "--yes")
    assert restored.code == 0, restored.err
    [kept] = _kept(home)
    assert f"kept at {kept}" in restored.out, restored.out
    assert _status(_db(home), target) == original
    assert _status(kept, target) == "forgotten"  # the replaced store, whole (its WAL folded in)
    assert not Path(f"{kept}-wal").exists()
    assert _db(home).stat().st_mode & 0o077 == 0  # the restored store is private to its owner

    undo = slowave(home, "--json", "restore", str(kept), "--yes")  # the kept file undoes it
    assert undo.code == 0, undo.err
    assert undo.json()["data"]["kept"] and _status(_db(home), target) == "forgotten"
    assert slowave(home, "unforget", target).code == 0


MIGRATIONS = Path(__file__).resolve().parents[2] / "memory" / "migrations"


def test_it_migrates_a_backup_from_an_older_schema(tmp_path: Path) -> None:
    old_home, new_home = tmp_path / "old", tmp_path / "new"
    # One migration short of the newest, whatever the newest is.
    older = sorted(p.stem for p in MIGRATIONS.glob("0*.py"))[-2]
    assert slowave(old_home, "migrate", "memory", older, "-v", "0").code == 0
    assert slowave(new_home, "migrate", "-v", "0").code == 0
    restored = slowave(new_home, "restore", str(_backup(old_home, tmp_path / "b")), "--yes")
    assert restored.code == 0, restored.err
    assert "Applied 1 migration(s) the backup predates" in restored.out
    assert slowave(new_home, "migrate", "--check").code == 0


def _start_up(home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", ENTRY, "up", "--no-worker", "--port", str(free_port())],
        cwd=REPO_ROOT,
        env=cli_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _registered(home: Path, pid: int) -> bool:
    return any(p.name.startswith(f"{pid}-") for p in home.glob("slowave.sqlite3-holders/*.json"))


def test_it_refuses_while_slowave_up_serves_the_store_and_not_after_it_was_killed(
    home: Path, seeded: dict[str, Any], tmp_path: Path
) -> None:
    backup = _backup(home, tmp_path)
    before, kept_before = _fingerprint(home), _kept(home)
    up = _start_up(home)
    try:
        deadline = time.monotonic() + 60
        while not _registered(home, up.pid):
            assert up.poll() is None and time.monotonic() < deadline, "slowave up did not start"
            time.sleep(0.1)
        refused = slowave(home, "restore", str(backup), "--yes")
        assert refused.code == 1, refused.out
        assert f"pid {up.pid} (slowave up" in refused.err, refused.err
        assert f"`kill {up.pid}`" in refused.err and "nothing was changed" in refused.err
        assert "Traceback" not in refused.err
        assert _fingerprint(home) == before and _kept(home) == kept_before
    finally:
        os.killpg(up.pid, signal.SIGKILL)  # no clean shutdown: the kernel drops its lock
        up.wait()
    restored = slowave(home, "restore", str(backup), "--yes")
    assert restored.code == 0, restored.err
    assert not _registered(home, up.pid)  # the dead process's note was swept


def test_it_refuses_while_an_mcp_server_serves_the_store(
    home: Path, seeded: dict[str, Any], tmp_path: Path
) -> None:
    backup = _backup(home, tmp_path)
    before = _fingerprint(home)
    with spawn_server(home=home, env={"SLOWAVE_EMBEDDER": "hash"}) as mcp:
        refused = slowave(home, "restore", str(backup), "--yes")
        assert refused.code == 1, refused.out
        assert f"pid {mcp.pid} (mcp_serve" in refused.err, refused.err
        assert "quit the agent that started this MCP server" in refused.err
        assert _fingerprint(home) == before

"""Storage faults are named: a damaged store fails `slowave doctor` (pointing at `slowave
restore`), and a server that cannot write its store says so in one line and exits."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.runner import ENTRY, REPO_ROOT, cli_env, slowave

DAMAGED_TABLES = ("memory_event", "memory_memory")


def _damage(db: Path) -> None:
    """Overwrite the root b-tree pages of two tables with garbage, as a failing disk would."""
    with sqlite3.connect(db) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = [
            conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0]
            for t in DAMAGED_TABLES
        ]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with db.open("r+b") as raw:
        for root in roots:
            raw.seek((root - 1) * page_size)
            raw.write(b"\xa5" * page_size)


@pytest.fixture
def migrated(tmp_path: Path) -> Path:
    result = slowave(tmp_path, "migrate", "-v", "0")
    assert result.code == 0, result.err
    return tmp_path


def test_doctor_fails_on_a_damaged_store_and_names_restore(migrated: Path) -> None:
    _damage(migrated / "slowave.sqlite3")
    result = slowave(migrated, "doctor", "--skip-model")
    assert result.code == 1, result.out + result.err
    assert "Traceback" not in result.err
    assert "integrity" in result.out and "slowave restore" in result.out


def test_doctor_passes_the_integrity_check_on_a_sound_store(migrated: Path) -> None:
    result = slowave(migrated, "--json", "doctor", "--skip-model")
    checks = {c["name"]: c for c in result.json()["data"]["checks"]}
    assert checks["integrity"]["status"] == "ok", checks["integrity"]


def test_mcp_serve_on_a_read_only_store_says_so_in_one_line_and_exits(migrated: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: a file mode cannot make the store read-only")
    db = migrated / "slowave.sqlite3"
    for path in (db, migrated):
        path.chmod(0o500 if path.is_dir() else 0o400)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", ENTRY, "mcp_serve"],
            cwd=REPO_ROOT,
            env=cli_env(migrated),
            input="",
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        migrated.chmod(0o700)
        db.chmod(0o600)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "read-only" in proc.stderr, proc.stderr

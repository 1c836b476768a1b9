"""Storage faults are named: a damaged store fails `slowave doctor` (pointing at `slowave
restore`), and a server that cannot write its store says so in one line and exits."""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.admin.live import live_server
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


@contextmanager
def _read_only_mount(source: Path, target: Path) -> Iterator[Path]:
    """`source` again at `target`, read-only (a bind mount: needs root, skips without it)."""
    target.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"needs root to bind-mount a read-only store: {mounted.stderr.decode()}")
    try:
        remount = ["mount", "-o", "remount,ro,bind", str(target)]
        if subprocess.run(remount, capture_output=True).returncode != 0:
            pytest.skip("cannot remount the bind mount read-only")
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True)


def test_mcp_serve_on_a_read_only_store_says_so_in_one_line_and_exits(
    migrated: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    store = tmp_path_factory.mktemp("store")
    (migrated / "slowave.sqlite3").rename(store / "slowave.sqlite3")
    # Rollback-journal mode, so the read-only store still opens and reads (WAL would need to
    # create its -shm file): only its writes fail, which is what the server must notice.
    with sqlite3.connect(store / "slowave.sqlite3") as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    with _read_only_mount(store, tmp_path_factory.mktemp("ro") / "mnt") as read_only:
        log = tmp_path_factory.mktemp("log") / "stderr.txt"
        with log.open("w") as stderr:
            # stdin stays open, as an agent keeps it: the server must exit on its own
            proc = subprocess.Popen(
                [sys.executable, "-c", ENTRY, "mcp-serve"],
                cwd=REPO_ROOT,
                env=cli_env(migrated, SLOWAVE_DB_PATH=str(read_only / "slowave.sqlite3")),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
            try:
                proc.wait(timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                assert proc.stdin is not None
                proc.stdin.close()
    proc.stderr = log.read_text()
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "read-only" in line]
    assert len(lines) == 1 and "cannot start" in lines[0], proc.stderr
    assert "storage_read_only" in lines[0]


def test_a_live_server_names_a_damaged_store_in_one_line_per_call(migrated: Path) -> None:
    token = secrets.token_urlsafe(24)
    _damage(migrated / "slowave.sqlite3")
    with live_server(
        migrated,
        ready="/api/health",
        SLOWAVE_API_TOKENS=token,
        SLOWAVE_ALLOW_ANONYMOUS_LOCAL="false",
    ) as base:

        def post(verb: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            request = urllib.request.Request(
                f"{base}/api/{verb}",
                data=json.dumps(body).encode(),
                method="POST",
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=120) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read())

        activate = {"task": "fix the build", "initial_goal": "green", "scope": "project:disk"}
        replies = [post("activate", activate) for _ in range(3)]
    for status, envelope in replies:
        assert status == 500, envelope
        assert envelope["error"]["code"] == "storage_corrupt", envelope
        assert envelope["error"]["retryable"] is False
        assert "slowave restore" in envelope["error"]["message"]
    log = (migrated / "up.log").read_text()
    assert "Traceback" not in log, log
    assert log.count("storage_corrupt") == 3, log


def test_a_store_deleted_under_a_live_server_takes_no_more_writes(migrated: Path) -> None:
    token = secrets.token_urlsafe(24)
    scope = "project:gone"
    with live_server(
        migrated,
        ready="/api/health",
        SLOWAVE_API_TOKENS=token,
        SLOWAVE_ALLOW_ANONYMOUS_LOCAL="false",
    ) as base:

        def call(verb: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
            request = urllib.request.Request(
                f"{base}/api/{verb}",
                data=None if body is None else json.dumps(body).encode(),
                method="GET" if body is None else "POST",
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=120) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read())

        status, envelope = call(
            "activate", {"task": "fix the build", "initial_goal": "green", "scope": scope}
        )
        assert status == 200, envelope
        session_id = envelope["data"]["session_id"]
        remember = {"scope": scope, "session_id": session_id, "type": "fact"}
        assert call("remember", remember | {"content": "The build runs on ci-3."})[0] == 200
        for suffix in ("", "-wal", "-shm"):
            (migrated / f"slowave.sqlite3{suffix}").unlink(missing_ok=True)
        replies = [
            call("remember", remember | {"content": f"Fact number {i} about the build."})
            for i in range(8)
        ]
        health = call("health")
    for status, envelope in replies:
        assert envelope["ok"] is False, envelope
        assert envelope["error"]["code"] == "storage_missing", envelope
    assert health[0] == 503 and health[1]["error"]["code"] == "storage_missing", health
    # no fresh, empty store was created in the deleted one's place
    assert not (migrated / "slowave.sqlite3").exists()


@contextmanager
def _small_tmpfs(target: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` at `target` (needs root to mount; skips without it)."""
    target.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"needs root to mount a small tmpfs: {mounted.stderr.decode()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True)


def test_a_full_disk_is_a_retryable_named_error_and_the_call_succeeds_once_freed(
    migrated: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    token = secrets.token_urlsafe(24)
    scope = "project:full"
    with _small_tmpfs(tmp_path_factory.mktemp("disk") / "mnt", "24m") as disk:
        (disk / "slowave.sqlite3").write_bytes((migrated / "slowave.sqlite3").read_bytes())
        with live_server(
            migrated,
            ready="/api/health",
            SLOWAVE_DB_PATH=str(disk / "slowave.sqlite3"),
            SLOWAVE_API_TOKENS=token,
            SLOWAVE_ALLOW_ANONYMOUS_LOCAL="false",
        ) as base:

            def post(verb: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
                request = urllib.request.Request(
                    f"{base}/api/{verb}",
                    data=json.dumps(body).encode(),
                    method="POST",
                    headers={
                        "Authorization": f"Bearer {token}",
                        "Content-Type": "application/json",
                    },
                )
                try:
                    with urllib.request.urlopen(request, timeout=120) as response:
                        return response.status, json.loads(response.read())
                except urllib.error.HTTPError as exc:
                    return exc.code, json.loads(exc.read())

            status, envelope = post(
                "activate", {"task": "fix the build", "initial_goal": "green", "scope": scope}
            )
            assert status == 200, envelope
            remember = {"scope": scope, "session_id": envelope["data"]["session_id"]}
            filler = disk / "filler"
            with filler.open("wb") as out:  # every free byte of the small disk
                with contextlib.suppress(OSError):
                    while True:
                        out.write(b"\0" * 65536)
                        out.flush()
            body = remember | {"type": "fact", "content": "x " * 3_400 + "The disk filled."}
            full = post("remember", body)
            filler.unlink()
            freed = post("remember", body)
    assert full[1]["ok"] is False, full
    assert full[1]["error"]["code"] == "storage_full" and full[1]["error"]["retryable"], full
    assert freed[1]["ok"] is True, freed

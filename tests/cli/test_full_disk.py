"""A full disk never kills `slowave up` (issue 26, finding 5).

prometheus-client keeps each process's samples in memory-mapped files under
`$SLOWAVE_HOME/metrics`; a write to a page the file system never backed ends the process with
SIGBUS, which nothing can catch. Here the home is a small tmpfs that the test fills: calls must
answer `storage_full` (retryable), the server must keep serving, and a remember must succeed
once space is freed. (tests/cli/test_storage_faults.py fills a disk that holds the database
only; here the metrics folder shares it, as under a default home.) Mounting the tmpfs needs
root: without it the test skips and says so.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.admin.live import free_port
from tests.cli.runner import ENTRY, REPO_ROOT, cli_env

TMPFS_SIZE = "48m"
SCOPE = "project:full-disk"


@contextmanager
def _small_tmpfs(target: Path) -> Iterator[Path]:
    target.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0700", "tmpfs", str(target)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"needs root to mount a small tmpfs: {mounted.stderr.decode().strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True)


def _fill(folder: Path) -> Path:
    """Write a file until the file system has no byte left; the file, to free it later."""
    filler = folder / "filler"
    chunk = b"\0" * (1 << 16)
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        try:
            while True:  # the last partial chunk
                out.write(b"\0" * 512)
        except OSError:
            pass
    return filler


@contextmanager
def _up(home: Path, log: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    env = cli_env(home, SLOWAVE_ALLOW_ANONYMOUS_LOCAL="true")
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "up", "--port", str(port), "--no-worker"],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    urllib.request.urlopen(f"{base}/api/health", timeout=2).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        pytest.fail("slowave up did not start:\n" + log.read_text())
                    time.sleep(0.2)
            yield base, proc
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=20)


def _post(base: str, verb: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{base}/api/{verb}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read())
    except OSError as exc:  # the server died (SIGBUS) or dropped the connection
        return {"ok": False, "error": {"code": "no answer", "message": str(exc)}}


def test_a_full_disk_answers_storage_full_and_a_remember_succeeds_once_space_is_freed(
    tmp_path: Path,
) -> None:
    home = _small_tmpfs(tmp_path / "home")
    with home as store, _up(store, tmp_path / "up.log") as (base, proc):
        activated = _post(
            base, "activate", {"task": "fill the disk", "initial_goal": "no crash", "scope": SCOPE}
        )
        assert activated["ok"] is True, activated
        session_id = activated["data"]["session_id"]
        filler = _fill(store)
        replies = [
            _post(
                base,
                "remember",
                {
                    "scope": SCOPE,
                    "session_id": session_id,
                    "type": "fact",
                    "content": f"Claim number {i} about the disk, padded {'x' * 2000}",
                },
            )
            for i in range(6)
        ]
        # Other tools and outcomes start new metric series, each a write to the sample files.
        replies.append(_post(base, "recall", {"scope": SCOPE, "query": "disk"}))
        replies.append(_post(base, "feedback", {"session_id": session_id, "items": []}))
        assert proc.poll() is None, f"exit {proc.poll()}: " + (tmp_path / "up.log").read_text()
        failed = [reply["error"] for reply in replies if not reply["ok"]]
        assert failed, replies
        assert {error["code"] for error in failed} <= {"storage_full", "invalid_input"}, failed
        full = [error for error in failed if error["code"] == "storage_full"]
        assert full and all(error["retryable"] for error in full), failed

        filler.unlink()
        stored = _post(
            base,
            "remember",
            {"scope": SCOPE, "session_id": session_id, "type": "fact", "content": "Disk freed."},
        )
        assert stored["ok"] is True, stored
        assert proc.poll() is None
    log = (tmp_path / "up.log").read_text()
    assert "Traceback" not in log, log

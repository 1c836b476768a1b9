"""`slowave up` and its embedded worker embed through ONNX Runtime; neither loads torch (the
export exists: the session made it, tests/conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from contextlib import closing
from pathlib import Path

import pytest

from tests.admin.live import free_port
from tests.cli.runner import ENTRY, REPO_ROOT, cli_env, run_python, slowave
from tests.e2e_support import mapped_files

pytestmark = pytest.mark.timeout(300)
SCOPE = "project:up-onnx"


def _descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
                )
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def _unembedded(db: Path) -> int:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
        return conn.execute(
            "SELECT count(*) FROM memory_memory WHERE embedded_at IS NULL"
        ).fetchone()[0]


def _activate(port: int) -> dict:
    body = {"task": "Which database keeps the bills?", "initial_goal": "answer", "scope": SCOPE}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/activate",
        method="POST",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def _wait(condition, what: str, process: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, f"slowave up exited while waiting for {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def _answers(port: int) -> bool:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2).close()
        return True
    except OSError:
        return False


def test_up_and_its_worker_embed_with_onnx_and_never_load_torch(tmp_path: Path) -> None:
    env = cli_env(
        tmp_path,
        SLOWAVE_EMBEDDER="onnx",
        SLOWAVE_EMBEDDED_WORKER="true",
        SLOWAVE_CONSOLIDATE_INTERVAL="1",
    )
    assert slowave(tmp_path, "migrate", "-v", "0", env=env).code == 0
    # Rows stored while the model was away: the worker's backfill pass must embed them.
    run_python(
        tmp_path,
        "from tests.cli.seeding import seed; from memory.models import Memory\n"
        f"seed({SCOPE!r}); Memory.objects.update(embedded_at=None)",
        env=env,
    )
    db = tmp_path / "slowave.sqlite3"
    assert _unembedded(db) > 0
    port = free_port()
    log = (tmp_path / "up.log").open("w")
    up = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "up", "--port", str(port)],
        cwd=REPO_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        _wait(lambda: _answers(port), "the server", up)
        reply = _activate(port)
        assert reply["ok"], reply
        codes = {w["code"] for w in reply["data"].get("warnings", [])}
        assert "lexical_only" not in codes, reply
        _wait(lambda: _unembedded(db) == 0, "the worker's backfill", up)

        processes = [up.pid, *_descendants(up.pid)]
        assert len(processes) >= 2, "no worker process"
        maps = {pid: mapped_files(pid) for pid in processes}
        assert not {pid for pid, files in maps.items() if any("libtorch" in f for f in files)}
        assert any("onnxruntime" in f for f in maps[up.pid])
        assert any("onnxruntime" in f for pid in processes[1:] for f in maps[pid])
    finally:
        os.killpg(up.pid, signal.SIGTERM)
        try:
            up.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait()
        log.close()
    text = (tmp_path / "up.log").read_text()
    assert "embedding with torch" not in text and "exporting the embedding model" not in text

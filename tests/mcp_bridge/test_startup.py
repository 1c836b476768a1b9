"""`manage.py mcp_serve` as a process: handshake latency, clean stdout, migrations, exit.

The latency budget is the product requirement (initialize + tools/list within 3 s of spawn,
whatever the embedding model costs). A spawn may be slowed by unrelated load on the machine,
so each check keeps the fastest of a few spawns, and when the machine is overloaded (load
average above the core count) it judges the CPU the server spent instead of wall time: what
the budget guards against is startup work such as importing torch, and that shows as CPU.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from tests.e2e_support import REPO_ROOT, server_args, server_env, spawn_server

STARTUP_BUDGET_SECONDS = 3.0
ATTEMPTS = 3


def _assert_fast_startup(home_for_attempt: Callable[[int], Path]) -> None:
    timings: list[tuple[float, float]] = []  # (wall, cpu)
    for attempt in range(ATTEMPTS):
        with spawn_server(home=home_for_attempt(attempt)) as client:
            timings.append((client.startup_seconds, client.startup_cpu_seconds))
        if timings[-1][0] < STARTUP_BUDGET_SECONDS:
            return
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        assert min(cpu for _, cpu in timings) < STARTUP_BUDGET_SECONDS, timings
    else:
        assert min(wall for wall, _ in timings) < STARTUP_BUDGET_SECONDS, timings


def test_it_answers_tools_list_within_three_seconds_on_a_fresh_database(tmp_path: Path) -> None:
    _assert_fast_startup(lambda attempt: tmp_path / f"fresh-{attempt}")


def test_it_answers_tools_list_within_three_seconds_on_an_existing_database(
    tmp_path: Path,
) -> None:
    with spawn_server(home=tmp_path) as first:
        # Any tool call waits for migrations, so after it the database is complete.
        assert first.call("slowave_remember", {})["ok"] is False
    _assert_fast_startup(lambda attempt: tmp_path)


def test_it_migrates_an_existing_database_in_place(tmp_path: Path) -> None:
    # An older database: only auth's tables exist, holding a row that must survive.
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "auth", "--verbosity", "0"],
        cwd=REPO_ROOT,
        env=server_env(tmp_path) | {"PATH": os.environ["PATH"]},
        check=True,
    )
    db_path = tmp_path / "slowave.sqlite3"
    with closing(sqlite3.connect(db_path)) as db, db:
        db.execute("INSERT INTO auth_group (name) VALUES ('kept')")
    with spawn_server(home=tmp_path) as client:
        assert client.call("slowave_remember", {})["error"]["code"] == "invalid_input"
    with closing(sqlite3.connect(db_path)) as db:
        assert db.execute("SELECT name FROM auth_group").fetchall() == [("kept",)]
        applied = {row[0] for row in db.execute("SELECT app FROM django_migrations")}
    assert {"auth", "memory", "sessions"} <= applied


def test_it_writes_only_protocol_frames_to_stdout(tmp_path: Path) -> None:
    # A fresh database, so migrate runs while the server answers; its output must not leak.
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "slowave_recall", "arguments": {"limit": 1}},
        },
    ]
    stderr_path = tmp_path / "stderr.log"
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, *server_args()],
            cwd=REPO_ROOT,
            env=server_env(tmp_path) | {"PATH": os.environ["PATH"]},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(r) + "\n" for r in requests).encode())
        process.stdin.flush()
        # Read the three replies before closing stdin: EOF cancels requests in flight.
        stdout = b"".join(process.stdout.readline() for _ in range(3))
        process.stdin.close()
        stdout += process.stdout.read()
        process.wait(timeout=30)
    frames = [json.loads(line) for line in stdout.decode().splitlines()]
    assert [frame.get("id") for frame in frames] == [1, 2, 3]
    assert all(frame["jsonrpc"] == "2.0" and "result" in frame for frame in frames)
    assert frames[2]["result"]["isError"] is True
    assert "; applied " in stderr_path.read_text()  # the start line counts the migrations
    assert process.returncode == 0


def test_it_exits_promptly_when_the_client_closes_stdin(tmp_path: Path) -> None:
    with spawn_server(home=tmp_path) as client:
        assert client.call("slowave_remember", {})["ok"] is False
        time.sleep(0.5)  # the embedding warm-up is under way
        pid = client.pid
        closing = time.monotonic()
    # stdio_client closes stdin, then waits up to 2 s before sending SIGTERM.
    assert time.monotonic() - closing < 2.0
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


def test_it_serves_with_the_background_worker_disabled() -> None:
    with spawn_server(args=("--no-worker",)) as client:
        assert len(client.tools) == 5
        assert client.call("slowave_recall", [])["error"]["code"] == "invalid_input"

"""Process-level helpers: management commands and Celery workers against a test SLOWAVE_HOME.

Each runs `manage.py` in a child process with the same isolated environment spawn_server uses,
so a worker and an MCP server share one database (SQLite in WAL mode).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from tests.e2e_support import REPO_ROOT, server_env

T = TypeVar("T")


def manage(
    home: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=server_env(home, env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def manage_json(home: Path, *args: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    done = manage(home, *args, "--json", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def spawn_manage(
    home: Path, *args: str, env: Mapping[str, str] | None = None, log: Path | None = None
) -> subprocess.Popen[str]:
    """A long-running command (a worker); its output goes to `log` (default: discarded)."""
    sink = log.open("w") if log else subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=server_env(home, env),
        stdout=sink,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def rows(db_path: Path, sql: str, *params: Any) -> list[tuple]:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as conn:
        return conn.execute(sql, params).fetchall()


def wait_for(check: Callable[[], T], *, timeout: float, interval: float = 0.2) -> T:
    """Poll until `check` returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            assert value, f"nothing after {timeout}s"
            return value
        time.sleep(interval)


def pass_counts(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {p["name"]: p["counts"] for p in report["passes"]}


def total_changes(report: dict[str, Any]) -> int:
    return sum(
        v for counts in pass_counts(report).values() for k, v in counts.items() if k != "full_sweep"
    )

"""Several `mcp_serve` processes on one fresh store, and a server that cannot start.

An editor opening three agent windows starts three servers at once on a store that does not
exist yet: migrations must run once, the others wait and find nothing to do, and every server
answers, on SQLite and on PostgreSQL. A server whose database is unusable must say so on
stderr and exit non-zero, even while its client keeps stdin open.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e_support import REPO_ROOT, server_args, server_env
from tests.pg_support import fresh_postgres_database

SERVERS = 6
# Six interpreters importing Django and the SDK on two busy cores: generous, but far below
# the hang this guards against (the servers used to wait for stdin to close).
ALL_SERVED_WITHIN_SECONDS = 120.0
EXIT_WITHIN_SECONDS = 60.0


async def _serve_one(home: Path, index: int, errlog: Any, env: dict[str, str]) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=server_args(),
        env=server_env(home, {"SLOWAVE_EMBEDDER": "hash", **env}),
        cwd=str(REPO_ROOT),
    )
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            assert len(listed.tools) == 5
            result = await session.call_tool(
                "slowave_activate",
                {"task": f"window {index}", "initial_goal": "served", "scope": "project:race"},
            )
            text = result.content[0]
            assert isinstance(text, types.TextContent)
            envelope: dict[str, Any] = json.loads(text.text)
            return envelope


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_store(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The environment naming a store no server has touched yet."""
    if request.param == "sqlite":
        yield {}  # SLOWAVE_HOME alone: the SQLite file is created by the first start
    else:
        with fresh_postgres_database() as url:
            yield {"DATABASE_URL": url}


def test_it_serves_every_one_of_several_servers_started_at_once_on_a_fresh_store(
    tmp_path: Path, fresh_store: dict[str, str]
) -> None:
    home = tmp_path / "fresh-home"  # does not exist yet: the first start creates everything
    envelopes: dict[int, dict[str, Any]] = {}
    logs = [tmp_path / f"server-{i}.stderr.log" for i in range(SERVERS)]

    async def main() -> None:
        with anyio.fail_after(ALL_SERVED_WITHIN_SECONDS):
            async with anyio.create_task_group() as tg:
                for index in range(SERVERS):
                    tg.start_soon(run, index)

    async def run(index: int) -> None:
        with logs[index].open("w") as errlog:
            envelopes[index] = await _serve_one(home, index, errlog, fresh_store)

    try:
        anyio.run(main)
    except BaseException as exc:
        stderr = "\n".join(f"--- server {i}\n{log.read_text()}" for i, log in enumerate(logs))
        raise AssertionError(f"not every server answered:\n{stderr}") from exc
    assert sorted(envelopes) == list(range(SERVERS))
    assert all(envelope["ok"] for envelope in envelopes.values()), envelopes
    assert len({envelope["data"]["session_id"] for envelope in envelopes.values()}) == SERVERS
    applied = sum("; applied " in log.read_text() for log in logs)  # in the start line
    assert applied == 1, [log.read_text() for log in logs]


def test_it_exits_non_zero_with_one_stderr_line_when_the_database_is_unusable(
    tmp_path: Path,
) -> None:
    (tmp_path / "slowave.sqlite3").write_bytes(b"this is not a database\n" * 200)
    process = subprocess.Popen(
        [sys.executable, *server_args()],
        cwd=REPO_ROOT,
        env=server_env(tmp_path, {"SLOWAVE_EMBEDDER": "hash"}) | {"PATH": os.environ["PATH"]},
        stdin=subprocess.PIPE,  # held open throughout, as an agent's client does
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        started = time.monotonic()
        returncode = process.wait(timeout=EXIT_WITHIN_SECONDS)
        elapsed = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        process.stdin.close()
        stdout, stderr = process.stdout.read(), process.stderr.read().decode()
        process.stdout.close()
        process.stderr.close()
    assert returncode == 1, (returncode, elapsed, stderr)
    assert stdout == b""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("mcp_serve: cannot start:"), stderr
    assert "file is not a database" in lines[0], stderr
    assert "Traceback" not in stderr

"""MCP over HTTP answers one agent while another agent's tool call waits on the database.

The test holds SQLite's write lock itself, so an activate (which writes) blocks inside the
server until the lock is released; a second call, which needs no lock, must be answered in
the meantime. With every call on one shared thread it would queue behind the blocked one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.api.live import Live, slowave_up_waiting
from tests.api.support import fresh_scope
from tests.e2e_support import check_envelope

TIMEOUT = 120.0
SETTLE_SECONDS = 1.0  # time for the blocked call to reach its worker thread


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with slowave_up_waiting(tmp_path_factory.mktemp("mcp-http-concurrency"), workers=2) as server:
        yield server


async def _call(url: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool(tool, arguments, read_timeout_seconds=TIMEOUT)
        assert isinstance(result, types.CallToolResult)
        return check_envelope(result)


async def _overlap(url: str, database: Path) -> dict[str, Any]:
    writer: dict[str, Any] = {}
    held = sqlite3.connect(database, isolation_level=None, timeout=30)
    try:
        held.execute("BEGIN IMMEDIATE")  # the server's next write waits for this

        async def blocked_activate() -> None:
            writer["envelope"] = await _call(
                url,
                "slowave_activate",
                {"task": "wait for the lock", "initial_goal": "g", "scope": fresh_scope("conc")},
            )

        async with anyio.create_task_group() as group:
            group.start_soon(blocked_activate)
            await anyio.sleep(SETTLE_SECONDS)
            # No database needed: refused by validation, in the other worker thread.
            with anyio.fail_after(30):
                answered = await _call(url, "slowave_recall", {"query": "anything"})
            writer["answered_while_blocked"] = "envelope" not in writer
            writer["other"] = answered
            held.execute("COMMIT")
    finally:
        held.close()
    return writer


def test_it_answers_a_second_call_while_the_first_waits_on_the_database(live: Live) -> None:
    outcome = anyio.run(_overlap, live.base, live.home / "slowave.sqlite3")
    assert outcome["answered_while_blocked"] is True
    assert outcome["other"]["ok"] is False
    assert outcome["other"]["error"]["code"] == "invalid_input"
    # The blocked call was not refused as busy: it went on once the lock was released.
    assert outcome["envelope"]["ok"] is True
    assert outcome["envelope"]["data"]["session_id"].startswith("sess_")

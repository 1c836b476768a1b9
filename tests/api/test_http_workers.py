"""Every REST route shares MCP's pool of SLOWAVE_HTTP_WORKERS threads under `slowave up`.

The test holds SQLite's write lock itself and sends as many writing REST calls as there are
workers: each blocks in a pool thread. Further calls, an agent verb, a read, a staff control
or an MCP tool call, must then wait for a free thread (the bound), while `/api/health`, outside
the pool, still answers; once the lock is released everything completes. With a thread per
request for any of those routes, its call would be answered at once; with a pool for MCP
alone, so would the REST calls.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.api.live import Live, slowave_up_waiting
from tests.api.support import fresh_scope

WORKERS = 2
SETTLE_SECONDS = 1.5  # time for the blocked calls to reach their worker threads
QUEUED_SECONDS = 2.0  # how long a call beyond the bound must stay unanswered


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with slowave_up_waiting(tmp_path_factory.mktemp("http-workers"), workers=WORKERS) as server:
        yield server


def _rest(base: str, path: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
    """POST `body` to `/api/{path}`, or GET it when `body` is None."""
    request = urllib.request.Request(
        f"{base}/api/{path}",
        method="GET" if body is None else "POST",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def _mcp_recall(base: str) -> dict[str, Any]:
    async with (
        streamable_http_client(f"{base}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("slowave_recall", {"query": "x"}, read_timeout_seconds=120)
        assert isinstance(result, types.CallToolResult)
        assert isinstance(result.structured_content, dict)
        return result.structured_content


class Call(threading.Thread):
    def __init__(self, work: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.work, self.result, self.error = work, None, None

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def outcome(self) -> Any:
        self.join(timeout=120)
        assert not self.is_alive() and self.error is None, self.error
        return self.result


def test_it_bounds_rest_routes_and_mcp_calls_by_one_pool_of_workers(live: Live) -> None:
    held = sqlite3.connect(live.home / "slowave.sqlite3", isolation_level=None, timeout=30)
    try:
        held.execute("BEGIN IMMEDIATE")  # every write of the server waits for this
        activate = {"task": "wait for the lock", "initial_goal": "g"}
        writers = [
            Call(lambda: _rest(live.base, "activate", {**activate, "scope": fresh_scope("pool")}))
            for _ in range(WORKERS)
        ]
        for writer in writers:
            writer.start()
        time.sleep(SETTLE_SECONDS)
        # None needs the lock, only a free worker thread: validation refuses the recalls, a
        # read only reads (WAL), and the staff control is refused to the anonymous caller.
        waiting = {
            "rest": Call(lambda: _rest(live.base, "recall", {})),
            "mcp": Call(lambda: anyio.run(_mcp_recall, live.base)),
            "read": Call(lambda: _rest(live.base, "stats", None)),
            "staff": Call(lambda: _rest(live.base, "memories/sch_1/forget", {"reason": "r"})),
        }
        for call in waiting.values():
            call.start()
        time.sleep(QUEUED_SECONDS)
        queued = {name: call.is_alive() for name, call in waiting.items()}
        # Outside the pool, the server is not wedged.
        with urllib.request.urlopen(f"{live.base}/api/health", timeout=30) as health:
            assert health.status == 200
        held.execute("COMMIT")
    finally:
        held.close()

    assert queued == dict.fromkeys(waiting, True)
    for writer in writers:
        status, envelope = writer.outcome()
        assert status == 200 and envelope["data"]["session_id"].startswith("sess_"), envelope
    status, envelope = waiting["rest"].outcome()
    assert status == 400 and envelope["error"]["code"] == "invalid_input", envelope
    envelope = waiting["mcp"].outcome()
    assert envelope["ok"] is False and envelope["error"]["code"] == "invalid_input", envelope
    status, envelope = waiting["read"].outcome()
    assert status == 200 and envelope["data"]["memories"] == 0, envelope
    status, envelope = waiting["staff"].outcome()
    assert status == 403 and envelope["error"]["code"] == "forbidden", envelope


def test_it_still_serves_more_calls_than_workers_one_after_another(live: Live) -> None:
    body = {"task": "one of many", "initial_goal": "g", "scope": fresh_scope("many")}
    calls = [Call(lambda: _rest(live.base, "activate", body)) for _ in range(WORKERS * 3)]
    for call in calls:
        call.start()
    outcomes = [call.outcome() for call in calls]
    assert all(status == 200 and envelope["ok"] for status, envelope in outcomes), outcomes

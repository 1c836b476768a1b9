"""`mcp_serve`'s stderr (the agent's log): a start line, then at most one routine line a
minute; warnings and errors always."""

from __future__ import annotations

import logging
import time

from mcp_bridge.log_limit import RoutineLineLimit
from tests.e2e_support import McpClient, spawn_server

SCOPE = "project:quiet-stderr"


def _several_calls(client: McpClient) -> None:
    opened = client.call(
        "slowave_activate", {"task": "quiet stderr", "initial_goal": "g", "scope": SCOPE}
    )
    sid = opened["data"]["session_id"]
    for n in range(3):
        memory = {"content": f"Quiet fact {n} holds.", "type": "fact"}
        assert client.call(
            "slowave_remember", {"session_id": sid, "scope": SCOPE, "memories": [memory]}
        )["ok"]
        assert client.call("slowave_recall", {"session_id": sid, "scope": SCOPE, "query": "quiet"})
    assert not client.call("slowave_remember", {"session_id": sid})["ok"]
    assert not client.call("slowave_no_such_tool", {})["ok"]


def test_a_first_start_and_several_calls_make_one_line() -> None:
    with spawn_server() as client:  # a fresh home: the migrations are applied on this start
        _several_calls(client)
        lines = client.stderr_text().splitlines()
    assert len(lines) == 1, lines
    prefix = f"mcp_serve: Slowave MCP on stdio, database {client.db_path}; applied "
    assert lines[0].startswith(prefix) and lines[0].endswith(" migrations"), lines


def test_routine_lines_are_limited_even_at_info_level() -> None:
    # At INFO the SDK logs every request and the reaper every session it ends.
    env = {
        "SLOWAVE_LOG_LEVEL": "INFO",
        "SLOWAVE_SESSION_IDLE_TIMEOUT": "0.3",
        "SLOWAVE_REAPER_POLL_SECONDS": "0.1",
    }
    with spawn_server(env=env) as client:
        _several_calls(client)
        for n in range(3):  # each session idles out and is reaped on its own poll
            time.sleep(1.0)
            task = {"task": f"idle {n}", "initial_goal": "g", "scope": SCOPE}
            assert client.call("slowave_activate", task)["ok"]
        time.sleep(1.0)
        lines = client.stderr_text().splitlines()
    assert lines[0].startswith("mcp_serve: Slowave MCP on stdio")
    assert len(lines[1:]) == 1, lines  # after the start line, one routine line
    assert lines[1].startswith("reaped idle sessions: sess_")


def _record(level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord("t", level, __file__, 1, message, None, None)


def test_the_limit_passes_one_routine_line_a_minute_and_counts_the_rest() -> None:
    now = [0.0]
    limit = RoutineLineLimit(interval=60.0, clock=lambda: now[0])
    assert limit.filter(_record(logging.INFO, "first"))
    assert not limit.filter(_record(logging.INFO, "second"))
    assert not limit.filter(_record(logging.DEBUG, "third"))
    now[0] = 59.0
    assert not limit.filter(_record(logging.INFO, "fourth"))
    now[0] = 60.0
    passed = _record(logging.INFO, "fifth")
    assert limit.filter(passed)
    assert passed.getMessage() == "fifth (3 routine lines held back)"


def test_warnings_and_errors_always_pass() -> None:
    limit = RoutineLineLimit(interval=60.0, clock=lambda: 0.0)
    assert limit.filter(_record(logging.INFO, "routine"))
    assert limit.filter(_record(logging.WARNING, "something odd"))
    assert limit.filter(_record(logging.ERROR, "something broke"))

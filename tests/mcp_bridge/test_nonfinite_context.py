"""NaN and Infinity in a context over stdio MCP: invalid_input naming the field, nothing stored.

The SDK reads `NaN`, `Infinity` and `1e999` in a frame as floats, and the SDK's own client
cannot send them (it writes null), so the frames go down raw pipes. The models are the ones
REST uses, so this is the same refusal tests/api/test_bad_bodies.py sees over HTTP.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from tests.raw_stdio import RawStdio, raw_stdio

SCOPE = "project:nonfinite"
REPLY_WITHIN_SECONDS = 60.0  # the first tool call waits for the migrations


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawStdio]:
    home = tmp_path_factory.mktemp("nonfinite")
    with raw_stdio(home, client_name="raw-nonfinite", reply_within=REPLY_WITHIN_SECONDS) as raw:
        yield raw


def _call(server: RawStdio, request_id: int, name: str, arguments: str) -> dict[str, Any]:
    """tools/call with `arguments` spliced in as raw JSON text; the tool's envelope."""
    server.send(
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{name}","arguments":{arguments}}}}}'
    )
    reply = server.read()
    assert reply["id"] == request_id and "result" in reply, reply
    envelope: dict[str, Any] = reply["result"]["structuredContent"]
    return envelope


def _sessions(server: RawStdio) -> int:
    with sqlite3.connect(server.db_path) as db:
        return int(db.execute("SELECT count(*) FROM memory_session").fetchone()[0])


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_it_refuses_a_non_finite_number_in_task_context(server: RawStdio, literal: str) -> None:
    arguments = json.dumps(
        {"task": "t", "initial_goal": "g", "scope": SCOPE, "task_context": {"w": "<n>"}}
    ).replace('"<n>"', literal)
    envelope = _call(server, 10, "slowave_activate", arguments)
    assert envelope["ok"] is False, envelope
    assert envelope["error"]["code"] == "invalid_input"
    assert envelope["error"]["field_errors"] == [
        {
            "path": "task_context",
            "message": "task_context.w must be a finite number (not NaN or Infinity)",
        }
    ]
    assert _sessions(server) == 0


def test_it_refuses_a_non_finite_number_in_a_committed_procedure_context(
    server: RawStdio,
) -> None:
    opened = _call(
        server,
        20,
        "slowave_activate",
        json.dumps({"task": "t", "initial_goal": "g", "scope": SCOPE}),
    )
    assert opened["ok"] is True, opened
    commit = {
        "session_id": opened["data"]["session_id"],
        "final_goal": "g",
        "outcome": "success",
        "outcome_summary": "done",
        "verification": {"status": "verified", "summary": "checked"},
        "procedure": {"summary": "s", "steps": [{"summary": "a"}], "context": {"k": 0}},
    }
    envelope = _call(
        server, 21, "slowave_commit", json.dumps(commit).replace('"k": 0', '"k": 1e999')
    )
    assert envelope["ok"] is False and envelope["error"]["code"] == "invalid_input", envelope
    assert envelope["error"]["field_errors"][0]["path"] == "procedure.context"
    # Nothing was committed: the session is still open and can commit cleanly.
    commit["procedure"] = None
    assert _call(server, 22, "slowave_commit", json.dumps(commit))["ok"] is True

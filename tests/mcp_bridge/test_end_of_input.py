"""`manage.py mcp_serve` fed its whole input at once, then end of input (issue 26, finding 16).

A client that writes its requests and closes stdin (a script, a pipe, a client shutting
down) must get an answer to every request it sent, and what the calls wrote must be stored.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from tests.e2e_support import REPO_ROOT, server_args, server_env
from tests.raw_stdio import PROTOCOL_VERSION

SCOPE = "project:end-of-input"


def _initialize() -> list[dict[str, Any]]:
    info = {"name": "pipe-test", "version": "1"}
    params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": info}
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


def _call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _serve_all_then_close(home: Path, frames: list[dict[str, Any]]) -> dict[Any, Any]:
    """Every frame on stdin, stdin closed at once; the replies by id once the server exits."""
    completed = subprocess.run(
        [sys.executable, *server_args()],
        cwd=REPO_ROOT,
        env=server_env(home) | {"PATH": os.environ["PATH"]},
        input="".join(json.dumps(frame) + "\n" for frame in frames).encode(),
        capture_output=True,
        timeout=180,
    )
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    replies = [json.loads(line) for line in completed.stdout.decode().splitlines()]
    return {reply.get("id"): reply for reply in replies}


def _envelope(reply: dict[str, Any]) -> Any:
    assert "result" in reply, reply
    return reply["result"]["structuredContent"]


def test_it_answers_every_call_read_before_end_of_input_and_stores_it(tmp_path: Path) -> None:
    activate = {"task": "Pipe the whole input at once", "initial_goal": "All answered"}
    replies = _serve_all_then_close(
        tmp_path, [*_initialize(), _call(1, "slowave_activate", activate | {"scope": SCOPE})]
    )
    activated = _envelope(replies[1])
    assert activated["ok"] is True, activated
    session_id = activated["data"]["session_id"]

    remember = {"scope": SCOPE, "session_id": session_id, "type": "fact"}
    replies = _serve_all_then_close(
        tmp_path,
        [
            *_initialize(),
            _call(2, "slowave_remember", remember | {"content": "The pipe test's port is 8123."}),
            _call(3, "slowave_remember", remember | {"content": "The pipe test runs nightly."}),
        ],
    )
    assert [_envelope(replies[i])["ok"] for i in (2, 3)] == [True, True], replies
    with closing(sqlite3.connect(tmp_path / "slowave.sqlite3")) as db:
        stored = {row[0] for row in db.execute("SELECT content FROM memory_memory")}
    assert {"The pipe test's port is 8123.", "The pipe test runs nightly."} <= stored

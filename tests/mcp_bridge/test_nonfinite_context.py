"""NaN and Infinity in a context over stdio MCP: invalid_input naming the field, nothing stored.

The SDK reads `NaN`, `Infinity` and `1e999` in a frame as floats, and the SDK's own client
cannot send them (it writes null), so the frames go down raw pipes. The models are the ones
REST uses, so this is the same refusal tests/api/test_bad_bodies.py sees over HTTP.
"""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import REPO_ROOT, server_args, server_env

SCOPE = "project:nonfinite"
REPLY_WITHIN_SECONDS = 60.0  # the first tool call waits for the migrations


class RawServer:
    """`manage.py mcp_serve` on pipes: frames in as text lines, replies out as JSON."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._stderr = (home / "stderr.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, *server_args()],
            cwd=REPO_ROOT,
            # The calls are refused before any embedding; the real model would only add load.
            env=server_env(home, {"SLOWAVE_EMBEDDER": "hash"}) | {"PATH": os.environ["PATH"]},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def send(self, frame: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(frame.encode() + b"\n")
        self.process.stdin.flush()

    def reply(self) -> dict[str, Any]:
        try:
            reply: dict[str, Any] = json.loads(self._lines.get(timeout=REPLY_WITHIN_SECONDS))
        except queue.Empty:
            pytest.fail(f"no reply within {REPLY_WITHIN_SECONDS} s")
        return reply

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self._stderr.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    raw = RawServer(tmp_path_factory.mktemp("nonfinite"))
    try:
        initialize = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-nonfinite", "version": "1"},
        }
        raw.send(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
        )
        assert "result" in raw.reply()
        raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield raw
    finally:
        if raw.process.poll() is None:
            raw.close()


def _call(server: RawServer, request_id: int, name: str, arguments: str) -> dict[str, Any]:
    """tools/call with `arguments` spliced in as raw JSON text; the tool's envelope."""
    server.send(
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{name}","arguments":{arguments}}}}}'
    )
    reply = server.reply()
    assert reply["id"] == request_id and "result" in reply, reply
    envelope: dict[str, Any] = reply["result"]["structuredContent"]
    return envelope


def _sessions(server: RawServer) -> int:
    with sqlite3.connect(server.home / "slowave.sqlite3") as db:
        return int(db.execute("SELECT count(*) FROM memory_session").fetchone()[0])


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_it_refuses_a_non_finite_number_in_task_context(server: RawServer, literal: str) -> None:
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
    server: RawServer,
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

"""Secrets never stored, end to end over stdio against `manage.py mcp_serve`: a remember holding
an AWS key is refused with a structured error by default, and with SLOWAVE_SECRETS=redact is
stored (and recalled) with the key replaced. The key reaches neither the reply nor the store."""

from __future__ import annotations

import json
import uuid

from tests.e2e_support import McpClient, server_fixture

AWS_ID = "AKIAIOSFODNN7EXAMPLE"
CLAIM = f"The nightly backup job uploads to S3 as {AWS_ID} from the build box"

mcp = server_fixture()
mcp_redact = server_fixture(env={"SLOWAVE_SECRETS": "redact"})


def _open(client: McpClient) -> tuple[str, str]:
    scope = f"project:backups-{uuid.uuid4().hex[:8]}"
    opened = client.call(
        "slowave_activate",
        {"task": "Fix the nightly backup upload", "initial_goal": "backups run", "scope": scope},
    )
    assert opened["ok"], opened
    return scope, opened["data"]["session_id"]


def _store_bytes(client: McpClient) -> bytes:
    """The database file with its WAL: what SQLite has written, live rows or not."""
    files = client.db_path.parent.glob(client.db_path.name + "*")
    return b"".join(p.read_bytes() for p in files if p.is_file())


def test_a_remember_holding_an_aws_key_is_refused(mcp: McpClient) -> None:
    scope, session_id = _open(mcp)
    reply = mcp.call(
        "slowave_remember",
        {"scope": scope, "session_id": session_id, "content": CLAIM, "type": "fact"},
    )
    assert reply["ok"] is False
    error = reply["error"]
    assert error["code"] == "invalid_input" and error["retryable"] is False
    assert error["field_errors"] == [
        {"path": "content", "message": error["message"]},
    ]
    assert "AWS access key at characters 41–60" in error["message"]
    assert AWS_ID not in json.dumps(reply)
    recalled = mcp.call(
        "slowave_recall",
        {"scope": scope, "session_id": session_id, "query": "nightly backup upload to S3"},
    )
    assert recalled["ok"] and recalled["data"]["memories"] == []
    assert AWS_ID.encode() not in _store_bytes(mcp)


def test_with_redact_it_is_stored_and_recalled_without_the_key(mcp_redact: McpClient) -> None:
    scope, session_id = _open(mcp_redact)
    stored = mcp_redact.call(
        "slowave_remember",
        {"scope": scope, "session_id": session_id, "content": CLAIM, "type": "fact"},
    )
    assert stored["ok"], stored
    assert stored["data"]["redacted"] == {"AWS access key": 1}
    recalled = mcp_redact.call(
        "slowave_recall",
        {"scope": scope, "session_id": session_id, "query": "nightly backup upload to S3"},
    )
    assert recalled["ok"], recalled
    assert [m["content"] for m in recalled["data"]["memories"]] == [
        "The nightly backup job uploads to S3 as [REDACTED:AWS access key] from the build box"
    ]
    written = _store_bytes(mcp_redact)
    assert b"nightly backup job uploads" in written and AWS_ID.encode() not in written

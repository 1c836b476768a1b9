"""U+0000 is refused alike on SQLite and PostgreSQL, and stripped from imports (issue 26, 9).

PostgreSQL's text and jsonb cannot hold NUL: a task, a task_context value or key, a memory or
a query holding one answered 500 there (SQLite stored it). Over a real `mcp_serve` on each
backend the call is refused as invalid_input naming the field; a transcript imported with the
real `slowave import` has its NULs dropped instead of ending in a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import cli_env, slowave
from tests.e2e_support import McpClient, server_fixture
from tests.pg_support import fresh_postgres_database

mcp = server_fixture(databases=("sqlite", "postgresql"))
SCOPE = "project:nul"


def _refused(envelope: dict, field: str) -> None:
    assert not envelope["ok"], envelope
    error = envelope["error"]
    assert error["code"] == "invalid_input", error
    assert [e["path"] for e in error["field_errors"]] == [field], error
    assert "U+0000" in error["message"], error


def _activate(mcp: McpClient, **extra: object) -> dict:
    arguments = {"task": "Check the NUL rule", "initial_goal": "g", "scope": SCOPE, **extra}
    return mcp.call("slowave_activate", arguments)


@pytest.mark.slow
def test_a_nul_in_any_field_or_key_is_invalid_input_naming_the_field(mcp: McpClient) -> None:
    _refused(_activate(mcp, task="Check the\x00 NUL rule"), "task")
    _refused(_activate(mcp, task_context={"branch": "ma\x00in"}), "task_context")
    _refused(_activate(mcp, task_context={"bra\x00nch": "main"}), "task_context")
    _refused(_activate(mcp, task_context={"deep": [{"k\x00": 1}]}), "task_context")
    opened = _activate(mcp)
    assert opened["ok"], opened
    session = opened["data"]["session_id"]
    stored = mcp.call(
        "slowave_remember",
        {"scope": SCOPE, "session_id": session, "content": "Nul\x00 byte here.", "type": "fact"},
    )
    _refused(stored, "content")
    found = mcp.call(
        "slowave_recall", {"scope": SCOPE, "session_id": session, "query": "nul\x00 byte"}
    )
    _refused(found, "query")
    # The server still serves after the refusals.
    assert mcp.call("slowave_recall", {"scope": SCOPE, "session_id": session, "query": "x"})["ok"]


def _transcript(tmp_path: Path) -> Path:
    path = tmp_path / "nul.jsonl"
    rows = [
        {"session_key": "s1", "role": "user", "content": "Where do the\x00 invoices go?"},
        {"session_key": "s1", "role": "assistant", "content": "Invoices go to the\x00 billing."},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _import_then_export(home: Path, transcript: Path, env: dict[str, str]) -> str:
    done = slowave(home, "--json", "import", str(transcript), "--scope", SCOPE, env=env)
    assert done.code == 0, done.err
    assert "Traceback" not in done.err
    exported = slowave(home, "export", "--scope", SCOPE, env=env)
    assert exported.code == 0, exported.err
    return exported.out


@pytest.mark.slow
def test_importing_a_transcript_with_nul_strips_it_on_sqlite(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = _import_then_export(home, _transcript(tmp_path), cli_env(home))
    assert "Invoices go to the billing." in out
    assert "\\u0000" not in out


@pytest.mark.slow
def test_importing_a_transcript_with_nul_strips_it_on_postgresql(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with fresh_postgres_database() as url:
        out = _import_then_export(home, _transcript(tmp_path), cli_env(home, DATABASE_URL=url))
    assert "Invoices go to the billing." in out
    assert "\\u0000" not in out

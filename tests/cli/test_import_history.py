"""Bring your history in, end to end: Claude Code transcripts and a ChatGPT export written out
here, imported with the real `slowave import` console script, then found by a real MCP client
over stdio (`slowave_activate`, `slowave_recall`) in the scope the import chose.

Both the import and the server embed with the real model, as a user's would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.runner import cli_env, slowave
from tests.e2e_support import McpClient, spawn_server

SESSION = "5b0c9f5e-1c1a-4a53-9d55-3f4e2a0c9d11"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("history-home")
    assert slowave(path, "migrate", "-v", "0").code == 0
    return path


def _run(home: Path, *args: str) -> Any:
    result = slowave(home, *args, env=cli_env(home, SLOWAVE_EMBEDDER="onnx"), timeout=300)
    assert result.code == 0, result.err
    assert "Traceback" not in result.err
    return result


def _claude_code_project(root: Path) -> Path:
    """A ~/.claude/projects lookalike: one project, one session with tool noise in it."""
    project = root / "-home-ana-src-checkout"
    project.mkdir(parents=True)
    common = {"cwd": "/home/ana/src/checkout", "sessionId": SESSION, "isSidechain": False}
    rows = [
        {"type": "summary", "summary": "Queue choice", "leafUuid": "u4"},
        {
            **common,
            "type": "user",
            "uuid": "u1",
            "timestamp": "2026-04-07T09:12:00.000Z",
            "message": {"role": "user", "content": "Which message broker should checkout use?"},
        },
        {
            **common,
            "type": "assistant",
            "uuid": "u2",
            "timestamp": "2026-04-07T09:12:04.000Z",
            "message": {
                "id": "msg_01",
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Check the infra repo.", "signature": "x"},
                    {"type": "tool_use", "id": "t1", "name": "Grep", "input": {"pattern": "amqp"}},
                ],
            },
        },
        {
            **common,
            "type": "user",
            "uuid": "u3",
            "timestamp": "2026-04-07T09:12:05.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "zebra77"}],
            },
        },
        {
            **common,
            "type": "assistant",
            "uuid": "u4",
            "timestamp": "2026-04-07T09:12:09.000Z",
            "message": {
                "id": "msg_02",
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "Checkout publishes its order events to RabbitMQ on the "
                        "vhost orders-prod; Kafka was ruled out for this service.",
                    }
                ],
            },
        },
    ]
    (project / f"{SESSION}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _chatgpt_export(root: Path) -> Path:
    mapping = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["m1"]},
        "m1": {
            "id": "m1",
            "parent": "root",
            "children": ["m2"],
            "message": {
                "id": "m1",
                "author": {"role": "user"},
                "create_time": 1775552400.0,
                "content": {
                    "content_type": "text",
                    "parts": ["My sister Ines lives in Porto and her birthday is 14 October."],
                },
                "metadata": {},
                "recipient": "all",
            },
        },
        "m2": {
            "id": "m2",
            "parent": "m1",
            "children": [],
            "message": {
                "id": "m2",
                "author": {"role": "assistant"},
                "create_time": 1775552410.0,
                "content": {"content_type": "text", "parts": ["Noted, 14 October for Ines."]},
                "metadata": {},
                "recipient": "all",
            },
        },
    }
    export = [
        {
            "title": "Family dates",
            "create_time": 1775552400.0,
            "update_time": 1775552410.0,
            "mapping": mapping,
            "current_node": "m2",
            "id": "6a1f-chat",
            "conversation_id": "6a1f-chat",
        }
    ]
    root.mkdir(parents=True)
    (root / "conversations.json").write_text(json.dumps(export))
    return root


def _recall(mcp: McpClient, scope: str, question: str) -> str:
    opened = mcp.call(
        "slowave_activate", {"task": question, "initial_goal": "answer it", "scope": scope}
    )
    assert opened["ok"], opened
    recalled = mcp.call(
        "slowave_recall",
        {
            "session_id": opened["data"]["session_id"],
            "scope": scope,
            "query": question,
            "evidence": "full",
        },
    )
    assert recalled["ok"], recalled
    return json.dumps(recalled["data"])


def test_history_from_claude_code_and_chatgpt_is_recalled_over_mcp(
    home: Path, tmp_path: Path
) -> None:
    projects = _claude_code_project(tmp_path / "projects")
    first = _run(home, "--json", "import", "--format", "claude-code", str(projects)).json()
    summary = first["data"]
    assert (summary["sessions_imported"], summary["turns_kept"], summary["files"]) == (1, 2, 1)
    assert summary["turns_dropped"] == 2  # the thinking/tool_use line and the tool_result line
    assert [s["scope"] for s in summary["scopes"]] == ["project:checkout"]
    again = _run(home, "--json", "import", "--format", "claude-code", str(projects)).json()
    assert (again["data"]["sessions_imported"], again["data"]["sessions_skipped"]) == (0, 1)
    said = _run(home, "import", "--format", "claude-code", str(projects)).out
    # A re-import says it imported nothing new, not "2 turns kept".
    assert said.startswith("Imported 0 new session(s), 1 imported before and left as they were")

    export = _chatgpt_export(tmp_path / "chatgpt-export")
    said = _run(home, "import", "--format", "chatgpt", str(export / "conversations.json")).out
    assert "Imported 1 new session(s); read 1 file(s)" in said and "project:chatgpt" in said

    with spawn_server(home=home) as mcp:
        found = _recall(mcp, "project:checkout", "Which message broker does checkout use?")
        assert "RabbitMQ" in found and "orders-prod" in found
        assert "zebra77" not in found  # a tool result is not history
        found = _recall(mcp, "project:chatgpt", "When is Ines's birthday?")
        assert "14 October" in found


def test_a_malformed_line_names_file_and_line_and_imports_nothing(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "-srv-billing"
    project.mkdir()
    good = {"type": "user", "sessionId": "s-bad", "message": {"role": "user", "content": "hi"}}
    (project / "a.jsonl").write_text(json.dumps(good) + "\n")
    (project / "b.jsonl").write_text(json.dumps(good | {"sessionId": "s2"}) + "\n{oops\n")
    failed = slowave(home, "import", "--format", "claude-code", str(project))
    assert failed.code == 1 and "Traceback" not in failed.err
    assert f"{project / 'b.jsonl'}:2: not valid JSON" in failed.err
    stats = slowave(home, "--json", "stats", "--scope", "project:-srv-billing").json()
    assert stats["data"]["sessions"] == 0


def _turns(project: Path, name: str, session: str, *texts: str) -> None:
    rows = [
        {"type": "user", "sessionId": session, "message": {"role": "user", "content": text}}
        for text in texts
    ]
    (project / name).write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_a_file_over_the_size_limit_in_a_directory_is_skipped_and_reported(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "-srv-ledger"
    project.mkdir()
    _turns(project, "a.jsonl", "s-small", "The ledger closes on Fridays.")
    _turns(project, "b.jsonl", "s-huge", "x" * 3_000)
    env = cli_env(home, SLOWAVE_IMPORT_MAX_BYTES="2000")
    result = slowave(home, "--json", "import", "--format", "claude-code", str(project), env=env)
    assert result.code == 0, result.err
    report = result.json()["data"]
    assert (report["files"], report["sessions_imported"]) == (1, 1)
    [skipped] = report["files_skipped"]
    assert skipped["file"] == str(project / "b.jsonl") and skipped["bytes"] > 3_000
    assert "SLOWAVE_IMPORT_MAX_BYTES" in skipped["reason"]
    said = slowave(home, "import", "--format", "claude-code", str(project), env=env).out
    assert f"skipped {project / 'b.jsonl'}: " in said
    # Named on its own, the same file is the whole import: refused, not skipped.
    alone = slowave(home, "import", "--format", "claude-code", str(project / "b.jsonl"), env=env)
    assert alone.code == 1 and "SLOWAVE_IMPORT_MAX_BYTES" in alone.err


def test_the_text_a_history_import_holds_is_bounded_in_total(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "-srv-bounded"
    project.mkdir()
    for index in range(3):  # each file within the limit, their text together beyond it
        _turns(project, f"{index}.jsonl", f"s-{index}", f"Turn {index}: " + "y" * 900)
    env = cli_env(home, SLOWAVE_IMPORT_MAX_BYTES="2000")
    result = slowave(home, "import", "--format", "claude-code", str(project), env=env)
    assert result.code == 1 and "Traceback" not in result.err
    assert "passes 2000 bytes at " + str(project / "2.jsonl") + ":1" in result.err
    assert "one project directory" in result.err
    stats = slowave(home, "--json", "stats", "--scope", "project:-srv-bounded").json()
    assert stats["data"]["sessions"] == 0

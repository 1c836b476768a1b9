"""Bad input always comes back as an invalid_input envelope with isError set, never as a
protocol error or a crash, and leaves the server answering."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e_support import McpClient, server_fixture

mcp = server_fixture()


def _invalid(envelope: dict[str, Any]) -> dict[str, Any]:
    assert envelope["ok"] is False, envelope
    error = envelope["error"]
    assert error["code"] == "invalid_input" and error["retryable"] is False, error
    return error


def test_it_rejects_an_unknown_key_with_its_field_path(mcp: McpClient) -> None:
    error = _invalid(
        mcp.call(
            "slowave_recall",
            {
                "session_id": "sess_0000000000000000",
                "scope": "project:x",
                "query": "q",
                "limit": 5,
            },
        )
    )
    assert error["field_errors"] == [{"path": "limit", "message": "Extra inputs are not permitted"}]


@pytest.mark.parametrize(
    ("tool", "arguments", "path"),
    [
        ("slowave_activate", {"task": 7, "initial_goal": "g", "scope": "project:x"}, "task"),
        ("slowave_activate", {"task": "t", "initial_goal": "g", "scope": "nocolon"}, "scope"),
        (
            "slowave_remember",
            {"scope": "project:x", "session_id": "s", "memories": "x"},
            "memories",
        ),
        ("slowave_feedback", {"retrieval_id": "ctx_1", "coverage": "everything"}, "coverage"),
        (
            "slowave_commit",
            {
                "session_id": "s",
                "final_goal": "g",
                "outcome": "success",
                "outcome_summary": "o",
                "verification": {"status": "verified", "summary": "s"},
                "procedure": {"summary": "p", "steps": ["text"]},
            },
            "procedure.steps[0]",
        ),
    ],
)
def test_it_rejects_wrong_types_with_field_errors(
    mcp: McpClient, tool: str, arguments: dict[str, Any], path: str
) -> None:
    error = _invalid(mcp.call(tool, arguments))
    assert [e["path"] for e in error["field_errors"]] == [path]


@pytest.mark.parametrize("arguments", [[1, 2], "text", 42, True])
def test_it_rejects_arguments_that_are_not_an_object(mcp: McpClient, arguments: Any) -> None:
    error = _invalid(mcp.call("slowave_activate", arguments))
    assert error["message"] == "arguments must be an object"


def test_it_treats_missing_arguments_as_an_empty_object(mcp: McpClient) -> None:
    error = _invalid(mcp.call("slowave_commit", None))
    assert "session_id" in {e["path"] for e in error["field_errors"]}


def test_it_rejects_an_unknown_tool_name(mcp: McpClient) -> None:
    error = _invalid(mcp.call("slowave_forget", {"memory_id": "sch_1"}))
    assert error["message"].startswith("unknown tool: slowave_forget")


def test_it_never_takes_client_info_from_arguments(mcp: McpClient) -> None:
    error = _invalid(
        mcp.call(
            "slowave_activate",
            {
                "task": "t",
                "initial_goal": "g",
                "scope": "project:x",
                "client_name": "spoof",
            },
        )
    )
    assert [e["path"] for e in error["field_errors"]] == ["client_name"]


def test_it_keeps_answering_after_bad_input(mcp: McpClient) -> None:
    for _ in range(3):
        _invalid(mcp.call("slowave_recall", "nope"))
    assert len(mcp.list_tools()) == 5

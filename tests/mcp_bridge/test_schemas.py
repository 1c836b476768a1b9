"""The advertised tool surface: exactly five tools, schemas straight from the pydantic models."""

from __future__ import annotations

import pytest

from memory.schemas import ActivateIn, CommitIn, FeedbackIn, RecallIn, RememberIn
from tests.e2e_support import McpClient, server_fixture

EXPECTED = {
    "slowave_activate": ActivateIn,
    "slowave_remember": RememberIn,
    "slowave_recall": RecallIn,
    "slowave_feedback": FeedbackIn,
    "slowave_commit": CommitIn,
}

mcp = server_fixture()


def test_it_lists_exactly_the_five_tools(mcp: McpClient) -> None:
    assert sorted(tool.name for tool in mcp.list_tools()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_advertises_the_models_json_schema(mcp: McpClient, name: str) -> None:
    tool = next(tool for tool in mcp.list_tools() if tool.name == name)
    assert tool.input_schema == EXPECTED[name].model_json_schema()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_describes_each_tool_for_agents(mcp: McpClient, name: str) -> None:
    tool = next(tool for tool in mcp.list_tools() if tool.name == name)
    assert tool.description and "Next:" in tool.description and "Errors:" in tool.description


def test_it_tells_agents_how_to_recover_from_incomplete_feedback(mcp: McpClient) -> None:
    commit = next(tool for tool in mcp.list_tools() if tool.name == "slowave_commit")
    assert "incomplete_feedback" in commit.description and "outstanding" in commit.description


def test_it_reports_the_server_identity(mcp: McpClient) -> None:
    assert mcp.initialize_result is not None
    assert mcp.initialize_result.server_info.name == "slowave"

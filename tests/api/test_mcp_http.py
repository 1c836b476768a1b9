"""MCP over streamable HTTP at `/mcp`: a live `slowave up` on a loopback port, the SDK client."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.admin.live import live_server
from tests.api.support import fresh_scope
from tests.e2e_support import check_envelope

TIMEOUT = 120.0  # the first tool call loads the embedding model


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # A real `slowave up` process: its own database, and the lifespan uvicorn really runs.
    # (An in-process server would need transactional_db, whose flush the append-only
    # triggers on Event refuse.)
    with live_server(tmp_path_factory.mktemp("mcp-http")) as base:
        yield base


async def _session_run(url: str, scope: str) -> tuple[list[str], dict[str, Any]]:
    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = sorted(tool.name for tool in (await session.list_tools()).tools)
        result = await session.call_tool(
            "slowave_activate",
            {"task": "plan the release", "initial_goal": "ship it", "scope": scope},
            read_timeout_seconds=TIMEOUT,
        )
        assert isinstance(result, types.CallToolResult)
        return tools, check_envelope(result)


def test_it_lists_the_five_tools_and_activates_over_http(live_url: str) -> None:
    tools, envelope = anyio.run(_session_run, live_url, fresh_scope("mcp-http"))
    assert tools == sorted(
        [
            "slowave_activate",
            "slowave_remember",
            "slowave_recall",
            "slowave_feedback",
            "slowave_commit",
        ]
    )
    assert envelope["ok"] is True and envelope["data"]["session_id"].startswith("sess_")


def test_it_refuses_a_bad_token_on_mcp_and_keeps_rest_beside_it(live_url: str) -> None:
    request = urllib.request.Request(
        f"{live_url}/mcp",
        method="POST",
        data=b"{}",
        headers={"Authorization": "Bearer nope", "Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 401
    assert json.loads(caught.value.read())["error"]["code"] == "unauthorized"
    with urllib.request.urlopen(f"{live_url}/api/health", timeout=10) as response:
        assert json.loads(response.read()) == {"ok": True, "data": {"status": "ok"}}


def test_it_refuses_a_foreign_host_header_on_mcp(live_url: str) -> None:
    # DNS rebinding: a web page whose name resolves to 127.0.0.1 must not reach tokenless MCP.
    request = urllib.request.Request(
        f"{live_url}/mcp",
        method="POST",
        data=b"{}",
        headers={"Host": "evil.example", "Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 421

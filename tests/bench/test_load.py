"""`slowave bench load`: concurrent agents over MCP HTTP against a real `slowave up`."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import anyio
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from mcp import types

from slowave_site.bench import load_agent
from slowave_site.bench.load import parse_agents, split_cycles
from slowave_site.bench.load_agent import TOOLS, Agent, Plan, Tally


def test_it_runs_full_cycles_with_no_lost_write_and_no_5xx(tmp_path: Path) -> None:
    out, stdout = tmp_path / "load.json", StringIO()
    call_command(
        "bench",
        "load",
        "--agents",
        "1,4",
        "--cycles",
        "8",
        "--embedder",
        "hash",
        "--out",
        str(out),
        stdout=stdout,
        stderr=StringIO(),
    )
    report = json.loads(out.read_text())
    assert report["ok"] is True, report["failures"]
    assert [phase["agents"] for phase in report["phases"]] == [1, 4]
    for phase in report["phases"]:
        assert phase["cycles_ok"] == 8 and phase["cycles_failed"] == 0
        assert phase["cycles_per_second"] > 0
        assert phase["http_5xx"] == 0 and phase["errors"] == {}
        assert phase["lost_writes"] == 0
        assert phase["memories_written"] == 8 * 3
        assert phase["recall_hit_rate"] == 1.0
        for tool in TOOLS:
            latency = phase["latency_ms"][tool]
            assert latency["calls"] == 8
            assert 0 < latency["p50"] <= latency["p95"] <= latency["p99"]
    verification = report["verification"]
    assert verification["checked"] == 3 + 2 * 8 * 3  # the warm-up cycle's writes too
    assert verification["lost_writes"] == 0 and verification["http_status"] == {"200": 51}
    assert report["server_log"]["tracebacks"] == 0
    table = stdout.getvalue()
    assert "cycles/s" in table and "p99" in table and "0 lost" in table


def test_it_shares_the_cycles_out_between_the_agents() -> None:
    assert split_cycles(64, 16) == [4] * 16
    assert split_cycles(10, 4) == [3, 3, 2, 2]
    assert parse_agents("1,4,16", 64) == [1, 4, 16]


@pytest.mark.parametrize(
    ("agents", "cycles", "message"),
    [
        ("1,x", 8, "comma-separated integers"),
        ("0", 8, "positive"),
        ("1,16", 8, "each needs a cycle"),
    ],
)
def test_it_refuses_bad_agent_counts_before_starting_a_server(
    agents: str, cycles: int, message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("bench", "load", "--agents", agents, "--cycles", str(cycles))


class _BusySession:
    """Stands in for the SDK's ClientSession: `storage_busy` twice, then the envelope."""

    def __init__(self, busy: int) -> None:
        self.busy, self.calls = busy, 0

    async def call_tool(self, name: str, arguments: dict, **_: object) -> types.CallToolResult:
        self.calls += 1
        if self.calls <= self.busy:
            error = {"code": "storage_busy", "message": "storage is busy", "retryable": True}
            envelope = {"ok": False, "error": error}
        else:
            envelope = {"ok": True, "data": {"tool": name}}
        return types.CallToolResult(content=[], structured_content=envelope, is_error=False)


def _agent_with(session: _BusySession) -> tuple[Agent, Tally]:
    tally = Tally()
    agent = Agent(index=0, url="http://127.0.0.1:9", plan=Plan(run="t", agents=1), tally=tally)
    agent.session = session  # type: ignore[assignment]
    return agent, tally


def test_it_retries_storage_busy_and_counts_the_retries_apart() -> None:
    agent, tally = _agent_with(_BusySession(busy=2))
    data = anyio.run(agent.call, "remember", {})
    assert data == {"tool": "slowave_remember"}
    assert tally.busy_retries["remember"] == 2 and not tally.errors
    assert len(tally.latency_ms["remember"]) == 1


def test_it_reports_storage_busy_as_an_error_once_the_retries_run_out(monkeypatch) -> None:
    monkeypatch.setattr(load_agent, "BUSY_BACKOFF_SECONDS", 0.001)
    agent, tally = _agent_with(_BusySession(busy=load_agent.BUSY_RETRIES + 1))
    assert anyio.run(agent.call, "commit", {}) is None
    assert tally.busy_retries["commit"] == load_agent.BUSY_RETRIES
    assert tally.errors == {"commit:storage_busy": 1}


def test_it_reports_the_share_of_a_no_work_floor_server(tmp_path: Path) -> None:
    out, stdout = tmp_path / "load.json", StringIO()
    call_command(
        "bench", "load", "--floor", "--agents", "1,2", "--cycles", "4", "--embedder", "hash",
        "--out", str(out), stdout=stdout, stderr=StringIO(),
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert report["ok"] is True, report["failures"]
    assert report["config"]["floor"] is True
    for phase in report["phases"]:
        floor = phase["floor"]
        assert floor["cycles_ok"] == 4 and floor["errors"] == {} and floor["http_5xx"] == 0
        assert floor["cycles_per_second"] > 0
        assert floor["share"] == round(phase["cycles_per_second"] / floor["cycles_per_second"], 4)
        assert floor["latency_ms"]["recall"]["calls"] == 4
    table = stdout.getvalue()
    assert "share of the no-work floor" in table and "2 agent(s) " in table


def test_it_gives_the_floor_the_five_tools_with_slowaves_input_schemas() -> None:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from mcp_bridge.tools import TOOLS as SLOWAVE_TOOLS
    from slowave_site.bench.load_floor import floor_server

    async def listed(url: str) -> dict[str, dict]:
        async with (
            streamable_http_client(f"{url}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return {t.name: t.input_schema for t in (await session.list_tools()).tools}

    with floor_server() as url:
        tools = anyio.run(listed, url)
    assert tools == {name: tool.input_schema() for name, tool in SLOWAVE_TOOLS.items()}

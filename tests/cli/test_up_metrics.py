"""`/metrics` of a real `slowave up --workers 2`: MCP and REST calls counted across both server
processes, worker passes from the embedded worker, and scrapes it must refuse."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from tests.admin.live import free_port
from tests.cli.runner import ENTRY, REPO_ROOT, cli_env
from tests.cli.test_up import _alive, _children
from tests.cli.test_up_workers import _health_pid

SCOPE = "project:metrics-e2e"
SCRAPE_TOKEN = "scrape-e2e-token"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _request(url: str, *, body: Any = None, token: str | None = None, host: str = "") -> Any:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if host:
        headers["Host"] = host
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _scrape(base: str, **kwargs: Any) -> Samples:
    status, text = _request(f"{base}/metrics", **kwargs)
    assert status == 200, text
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def _total(samples: Samples, name: str, **labels: str) -> float:
    """Sum over every series of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


async def _mcp_calls(base: str) -> None:
    async with (
        streamable_http_client(f"{base}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        opened = await session.call_tool(
            "slowave_activate", {"task": "metrics e2e", "initial_goal": "count", "scope": SCOPE}
        )
        sid = opened.structured_content["data"]["session_id"]
        for n in range(2):
            memory = {"content": f"Metrics fact number {n} is true.", "type": "fact"}
            stored = await session.call_tool(
                "slowave_remember", {"session_id": sid, "scope": SCOPE, "memories": [memory]}
            )
            assert stored.structured_content["ok"], stored.structured_content
        failed = await session.call_tool("slowave_recall", {"session_id": sid})
        assert failed.structured_content["error"]["code"] == "invalid_input"
        unknown = await session.call_tool("slowave_nonexistent", {})
        assert not unknown.structured_content["ok"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("metrics-up")
    port = free_port()
    env = cli_env(
        home,
        SLOWAVE_EMBEDDED_WORKER="true",
        SLOWAVE_CONSOLIDATE_INTERVAL="1",
        SLOWAVE_METRICS_TOKEN=SCRAPE_TOKEN,
    )
    out, err = home / "up.out", home / "up.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        up = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "up", "--port", str(port), "--workers", "2"],
            cwd=REPO_ROOT,
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    family: list[int] = []
    try:
        deadline, pids = time.monotonic() + 90, set()
        while len(pids) < 2:
            try:
                pids.add(_health_pid(base))
            except OSError:
                assert up.poll() is None, err.read_text()
                time.sleep(0.2)
            assert time.monotonic() < deadline, f"only {pids} answered; {err.read_text()}"
        family = _children(up.pid)
        family += [grandchild for child in family for grandchild in _children(child)]
        yield {"base": base, "home": home, "pids": pids, "out": out, "err": err}
    finally:
        os.kill(up.pid, signal.SIGTERM)
        up.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_alive(pid) for pid in family) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in family:
            if _alive(pid):
                os.killpg(pid, signal.SIGKILL)


def _rest_calls_until_both_processes_counted(server: dict[str, Any]) -> int:
    """Five REST activations, and more until each server process has recorded calls (the
    kernel picks which process accepts a connection); returns how many were made."""
    folder, made = server["home"] / "metrics", 0
    body = {"task": "metrics e2e over REST", "initial_goal": "count", "scope": SCOPE}
    while made < 5 or not all((folder / f"counter_{pid}.db").exists() for pid in server["pids"]):
        status, text = _request(f"{server['base']}/api/activate", body=body)
        assert status == 200, text
        made += 1
        assert made < 200, "one server process never answered a call"
    return made


def test_it_counts_calls_from_every_process_by_tool_and_code(server: dict[str, Any]) -> None:
    base = server["base"]
    anyio.run(_mcp_calls, base)
    activations = _rest_calls_until_both_processes_counted(server)
    status, text = _request(f"{base}/api/remember", body={"scope": SCOPE})
    assert status == 400, text

    samples = _scrape(base)
    mcp, rest = {"surface": "mcp"}, {"surface": "rest"}
    calls = "slowave_calls_total"
    assert _value(samples, calls, **mcp, tool="slowave_activate", code="ok") == 1
    assert _value(samples, calls, **mcp, tool="slowave_remember", code="ok") == 2
    assert _value(samples, calls, **mcp, tool="slowave_recall", code="invalid_input") == 1
    assert _value(samples, calls, **mcp, tool="unknown", code="invalid_input") == 1
    assert _value(samples, calls, **rest, tool="slowave_activate", code="ok") == activations
    assert _value(samples, calls, **rest, tool="slowave_remember", code="invalid_input") == 1

    histogram = "slowave_call_duration_seconds"
    labels = {**rest, "tool": "slowave_activate"}
    assert _value(samples, f"{histogram}_count", **labels) == activations
    buckets = sorted(
        (float(dict(ls)["le"]), v)
        for (n, ls), v in samples.items()
        if n == f"{histogram}_bucket" and set(labels.items()) <= ls
    )
    assert buckets and buckets[-1] == (float("inf"), activations)
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)  # cumulative
    assert _value(samples, f"{histogram}_sum", **labels) > 0
    assert _value(samples, "slowave_embedding_duration_seconds_count") >= 2
    assert _value(samples, "slowave_memories", scope_kind="project", status="active") == 2
    assert _value(samples, "slowave_sessions", scope_kind="project", status="open") == (
        activations + 1
    )


def test_it_counts_the_embedded_workers_passes(server: dict[str, Any]) -> None:
    deadline = time.monotonic() + 60
    while True:  # beat asks for the passes every second (SLOWAVE_CONSOLIDATE_INTERVAL=1)
        samples = _scrape(server["base"])
        if _total(samples, "slowave_worker_passes_total", status="succeeded"):
            break
        assert time.monotonic() < deadline, "no worker pass was counted"
        time.sleep(0.5)
    ran = _total(samples, "slowave_worker_pass_duration_seconds_count")
    assert ran >= _total(samples, "slowave_worker_passes_total", status="succeeded")


def test_it_refuses_bad_scrapes_and_takes_the_metrics_token(server: dict[str, Any]) -> None:
    base = server["base"]
    status, text = _request(f"{base}/metrics", token="not-a-token")
    assert status == 401 and json.loads(text)["error"]["code"] == "unauthorized"
    status, text = _request(f"{base}/metrics", host="rebound.example")
    assert status == 421 and json.loads(text)["error"]["code"] == "host_not_allowed"
    assert _scrape(base, token=SCRAPE_TOKEN)


def test_it_printed_its_block_with_both_processes(server: dict[str, Any]) -> None:
    printed = Path(server["out"]).read_text()
    assert printed.startswith("Slowave is up (2 server processes)\n"), printed
    assert f"  metrics    {server['base']}/metrics\n" in printed

"""`slowave up --workers N`: N server processes on one port, one migration, one embedded worker,
each process a holder of the store and all of them gone on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.admin.live import free_port
from tests.cli.runner import ENTRY, REPO_ROOT, cli_env
from tests.cli.test_up import _alive, _children


def _health_pid(base: str) -> int:
    with urllib.request.urlopen(f"{base}/api/health", timeout=5) as response:
        assert response.status == 200
        return int(response.headers["x-slowave-pid"])


async def _cycle(base: str, agent: int) -> dict[str, Any]:
    scope = f"project:workers-{agent}"
    async with (
        streamable_http_client(f"{base}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        opened = await session.call_tool(
            "slowave_activate",
            {"task": f"agent {agent} checks workers", "initial_goal": "check", "scope": scope},
        )
        assert opened.structured_content["ok"], opened.structured_content
        data = opened.structured_content["data"]
        args = {"session_id": data["session_id"], "scope": scope}
        stored = await session.call_tool(
            "slowave_remember",
            {
                **args,
                "memories": [{"content": f"Agent {agent} runs on port 80{agent}.", "type": "fact"}],
            },
        )
        assert stored.structured_content.get("ok"), stored.structured_content
        query = f"Which port does agent {agent} run on?"
        recalled = await session.call_tool("slowave_recall", {**args, "query": query})
        return recalled.structured_content


async def _two_clients(base: str) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = [{}, {}]

    async def run(agent: int) -> None:
        results[agent] = await _cycle(base, agent)

    async with anyio.create_task_group() as group:
        for agent in (0, 1):
            group.start_soon(run, agent)
    return results


def test_it_serves_from_every_worker_process_and_stops_them_all_on_sigterm(
    tmp_path: Path,
) -> None:
    port, base = free_port(), ""
    base = f"http://127.0.0.1:{port}"
    up = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "up", "--port", str(port), "--workers", "2"],
        cwd=REPO_ROOT,
        env=cli_env(tmp_path, SLOWAVE_EMBEDDED_WORKER="true"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    family: list[int] = []
    try:
        deadline = time.monotonic() + 90
        pids: set[int] = set()
        while len(pids) < 2:  # both server processes answer on the one port
            try:
                pids.add(_health_pid(base))
            except OSError:
                assert up.poll() is None and time.monotonic() < deadline, "up did not start"
                time.sleep(0.2)
            assert time.monotonic() < deadline, f"only pids {pids} answered"
        assert up.pid not in pids
        recalled = anyio.run(_two_clients, base)
        for agent, envelope in enumerate(recalled):
            assert envelope["ok"], envelope
            contents = [m["content"] for m in envelope["data"]["memories"]]
            assert f"Agent {agent} runs on port 80{agent}." in contents
        holders = [
            json.loads(note.read_text())
            for note in (tmp_path / "slowave.sqlite3-holders").glob("*.json")
        ]
        roles = sorted(h["role"] for h in holders if h["pid"] in pids | {up.pid})
        assert roles == ["slowave up", "slowave up worker", "slowave up worker"]
        family = _children(up.pid)
        assert pids <= set(family)
        family += [grandchild for child in family for grandchild in _children(child)]
        # One embedded Celery worker, not one per server process.
        celery = [pid for pid in family if b"celery" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert celery, "the embedded worker did not start"
        assert all(pid not in pids for pid in celery)
    finally:
        os.kill(up.pid, signal.SIGTERM)
        up.wait(timeout=30)
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in family) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in family if _alive(pid)], "a process outlived slowave up"

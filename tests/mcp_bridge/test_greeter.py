"""The handshake answered before the heavy imports (mcp_bridge.greeter), over real stdio.

The first start of a store records what the SDK answered to `initialize` and `tools/list`;
later starts answer them from that record while Django and the SDK are still importing. What
the client sees must be what the SDK would have said, once per request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_bridge.greeter import CACHE_NAME
from tests.e2e_support import REPO_ROOT, server_args, server_env, spawn_server

# The SDK's import alone costs more CPU than this; answering from the cache costs a tenth.
GREETED_CPU_SECONDS = 0.45

OPENING = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw-greeter-test", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": "two", "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "slowave_recall", "arguments": {"limit": 1}},
    },
]


def _raw_session(home: Path) -> list[dict[str, Any]]:
    """Every frame the server wrote for OPENING, in order."""
    process = subprocess.Popen(
        [sys.executable, *server_args()],
        cwd=REPO_ROOT,
        env=server_env(home) | {"PATH": os.environ["PATH"]},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(m) + "\n" for m in OPENING).encode())
    process.stdin.flush()
    lines = [process.stdout.readline() for _ in range(3)]
    process.stdin.close()
    lines.append(process.stdout.read())
    process.wait(timeout=30)
    return [json.loads(line) for chunk in lines for line in chunk.decode().splitlines()]


def test_it_answers_the_handshake_before_importing_django_and_the_sdk(tmp_path: Path) -> None:
    with spawn_server(home=tmp_path) as first:
        recorded = (first.initialize_result, first.tools)
    assert (tmp_path / CACHE_NAME).exists()
    cpu: list[float] = []
    for _ in range(3):
        with spawn_server(home=tmp_path) as later:
            assert (later.initialize_result, later.tools) == recorded
            cpu.append(later.startup_cpu_seconds)
            # Tool calls still work: the SDK took over the stream the greeter read.
            assert later.call("slowave_recall", {})["error"]["code"] == "invalid_input"
    assert min(cpu) < GREETED_CPU_SECONDS, cpu


def test_it_answers_each_request_once_as_the_sdk_would(tmp_path: Path) -> None:
    by_sdk = _raw_session(tmp_path)
    greeted = _raw_session(tmp_path)
    assert [frame["id"] for frame in greeted] == [1, "two", 3]
    assert greeted[:2] == by_sdk[:2]
    assert greeted[1]["result"]["tools"]
    assert greeted[0]["result"]["protocolVersion"] == "2025-06-18"


def test_it_leaves_the_handshake_to_the_sdk_when_the_sources_changed(tmp_path: Path) -> None:
    by_sdk = _raw_session(tmp_path)
    cache = tmp_path / CACHE_NAME
    document = json.loads(cache.read_text())
    document["key"] = "sources of another version"
    for entry in document["versions"].values():
        entry["tools/list"]["tools"] = []
    cache.write_text(json.dumps(document))
    assert _raw_session(tmp_path)[:2] == by_sdk[:2]


def test_it_refreshes_a_record_the_sdk_contradicts(tmp_path: Path) -> None:
    by_sdk = _raw_session(tmp_path)
    cache = tmp_path / CACHE_NAME
    document = json.loads(cache.read_text())
    for entry in document["versions"].values():
        entry["tools/list"]["tools"] = []
    cache.write_text(json.dumps(document))
    # Same key, different answer: served once (the greeter cannot know), then corrected.
    assert _raw_session(tmp_path)[1]["result"]["tools"] == []
    assert _raw_session(tmp_path)[:2] == by_sdk[:2]

"""mcp_bridge.collector: a stdio server starts without cycle collections, then collects.

The server is the real `manage.py mcp_serve` over raw pipes; the only addition is a probe the
interpreter runs first, which notes on stderr how many objects were frozen at each collection.
Startup collections (before `resume` froze startup's objects) would note zero.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp_bridge import collector
from tests.e2e_support import REPO_ROOT, server_env
from tests.raw_stdio import PROTOCOL_VERSION

_PROBE = """
import gc, os, runpy, sys
def note(phase, info):
    if phase == "start":
        os.write(2, b"gc-probe frozen=%d\\n" % gc.get_freeze_count())
gc.callbacks.append(note)
sys.argv = ["manage.py", "mcp_serve"]
runpy.run_path("manage.py", run_name="__main__")
"""


def _frames() -> bytes:
    info = {"name": "collector-test", "version": "1"}
    opening = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": info}
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": opening},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    for n in range(3, 6):
        task = {"task": f"probe the collector {n}", "initial_goal": "g", "scope": "user:gc"}
        params = {"name": "slowave_activate", "arguments": task}
        frames.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
    return b"".join(json.dumps(f).encode() + b"\n" for f in frames)


def test_the_server_collects_only_after_startup_was_frozen(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=REPO_ROOT,
        env=server_env(tmp_path, {"SLOWAVE_EMBEDDER": "hash"}) | {"PATH": os.environ["PATH"]},
        input=_frames(),
        capture_output=True,
        timeout=120,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3, 4, 5], done.stderr.decode(errors="replace")
    assert all(r["result"]["structuredContent"]["ok"] for r in replies[2:])
    frozen = [
        int(line.split(b"=")[1]) for line in done.stderr.splitlines() if b"gc-probe" in line
    ]
    assert frozen, "the server never collected: collection was not resumed"
    assert min(frozen) > 0, f"{frozen.count(0)} collections ran before startup was frozen"


def test_resume_without_pause_leaves_the_collector_alone() -> None:
    # A command run in-process (as tests do) never paused: nothing here is frozen.
    before = gc.get_freeze_count()
    collector.resume()
    assert gc.isenabled()
    assert gc.get_freeze_count() == before

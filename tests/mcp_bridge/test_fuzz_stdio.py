"""Fuzzing the five MCP tools over stdio: a raw `manage.py mcp_serve`, hostile frames in.

Raw pipes rather than the SDK's client, which cannot send what is fuzzed here: literal NaN,
lone surrogates, invalid UTF-8, truncated or doubled frames, hostile ids and methods. Bodies
start valid, from real ids of two scopes, and are mutated (tests/fuzz/bodies.py); every reply
must be a JSON-RPC error or a tools/call result carrying the Slowave envelope, never a
traceback, and a refused call must leave the SQLite file as it was (tests/fuzz/checks.py).
Reproducible: hypothesis with a fixed seed and number of examples, no shrinking.

Each fuzzed frame is followed by a probe, an invalid tools/call that writes nothing: tool calls
run one at a time in arrival order over stdio, so once the probe is answered every reply owed
to the fuzzed frame has been written and the store holds all it will.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from tests.e2e_support import REPO_ROOT, server_args, server_env
from tests.fuzz import bodies, wire
from tests.fuzz.checks import Findings, jsonrpc_problems, refused_frame, text_problems
from tests.fuzz.seed import seed_pool
from tests.fuzz.values import Pool, run_examples

pytestmark = pytest.mark.timeout(300)
REPLY_SECONDS = 60.0


class Stdio:
    """`mcp_serve` on pipes: byte lines in, parsed frames out."""

    def __init__(self, home: Path) -> None:
        self.db_path = home / "slowave.sqlite3"
        self.stderr_path = home / "stderr.log"
        self._stderr = self.stderr_path.open("w")
        env = server_env(home, {"SLOWAVE_EMBEDDER": "hash"}) | {"PATH": os.environ["PATH"]}
        self.process = subprocess.Popen(
            [sys.executable, *server_args()],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self.ids = itertools.count(1)
        self.answered: set[Any] = set()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def _send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def _read(self) -> Any:
        try:
            line = self._lines.get(timeout=REPLY_SECONDS)
        except queue.Empty:
            alive = self.process.poll() is None
            pytest.fail(f"no reply within {REPLY_SECONDS} s (server alive: {alive})")
        try:
            return json.loads(line)
        except ValueError:
            return {"not JSON": line.decode("utf-8", "replace")}

    def exchange(self, line: bytes) -> list[Any]:
        """Send `line`, then a probe; every frame that came before the probe's reply."""
        probe = f"probe-{next(self.ids)}"
        self._send(line)
        self._send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": probe,
                    "method": "tools/call",
                    "params": {"name": "slowave_recall", "arguments": {}},
                }
            ).encode()
        )
        frames = []
        while True:
            frame = self._read()
            if isinstance(frame, dict) and frame.get("id") == probe:
                return frames
            frames.append(frame)

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A well-formed tools/call; its envelope's data (it must be ok)."""
        request_id = next(self.ids)
        frame = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        frame["params"] = {"name": tool, "arguments": arguments}
        (reply,) = self.exchange(json.dumps(frame).encode())
        envelope = reply["result"]["structuredContent"]
        assert envelope["ok"], envelope
        data: dict[str, Any] = envelope["data"]
        return data

    def initialize(self) -> None:
        self._send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "fuzz", "version": "1"},
                    },
                }
            ).encode()
        )
        assert "result" in self._read()
        self._send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def close(self) -> str:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self._stderr.close()
        return self.stderr_path.read_text(errors="replace")


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stdio, Pool]]:
    server = Stdio(tmp_path_factory.mktemp("fuzz-stdio"))
    try:
        server.initialize()
        yield server, seed_pool(server.call)
    finally:
        if server.process.poll() is None:
            server.close()


def _problems(sent: Any, frames: list[Any], *, corrupted: bool) -> tuple[list[str], bool]:
    """Problems with the frames answering `sent` (or a corruption of it, which may get any
    reply or none), and whether they refused it."""
    request_id = sent.get("id") if isinstance(sent, dict) else None
    request_id = request_id if wire.valid_id(request_id) else None
    tool = None
    if isinstance(sent, dict) and sent.get("method") == "tools/call":
        params = sent.get("params")
        tool = str(params.get("name")) if isinstance(params, dict) else "?"
    problems = []
    for frame in frames:
        answers = isinstance(frame, dict) and "result" in frame
        problems += text_problems(json.dumps(frame))
        problems += jsonrpc_problems(frame, request_id, tool=tool if answers else None)
    ids = [frame.get("id") for frame in frames if isinstance(frame, dict)]
    is_request = request_id is not None and isinstance(sent.get("method"), str) and not corrupted
    if is_request and request_id not in ids and None not in ids:
        problems.append("no reply to a request")
    return problems, all(refused_frame(frame) for frame in frames)


def test_it_answers_every_fuzzed_stdio_call_with_an_envelope_or_json_rpc_error(
    stdio: tuple[Stdio, Pool],
) -> None:
    server, pool = stdio
    findings = Findings()

    def example(data: st.DataObject) -> None:
        request_id = next(server.ids)
        kind = data.draw(st.integers(0, 9))
        tool: str | None = None
        if kind < 8:
            frame, tool = data.draw(wire.call_frames(pool, request_id))
        else:
            frame = data.draw(wire.hostile_frames(pool, request_id))
        line = wire.encoded(frame, raw_utf8=data.draw(st.integers(0, 5)) == 0)
        corrupted = data.draw(st.integers(0, 11)) == 0
        if corrupted:
            line = data.draw(wire.corrupted(line))

        def send() -> tuple[Any, list[str], bool]:
            frames = server.exchange(line)
            problems, refused = _problems(frame, frames, corrupted=corrupted)
            return frames, problems, refused

        frames = findings.guarded("stdio", str(tool), frame, server.db_path, send)
        for reply in frames:
            result = reply.get("result") if isinstance(reply, dict) else None
            envelope = (result or {}).get("structuredContent") if isinstance(result, dict) else None
            if tool in bodies.TOOLS and (envelope or {}).get("ok"):
                pool.learn(tool, frame["params"]["arguments"], envelope["data"])

    run_examples(400, example)
    stderr = server.close()
    assert not text_problems(stderr), "the server logged a traceback:\n" + stderr[-6000:]
    assert server.process.returncode == 0, stderr[-3000:]
    assert not findings.seen, findings.report()
    assert findings.calls >= 400 and findings.refused > 0, (findings.calls, findings.refused)

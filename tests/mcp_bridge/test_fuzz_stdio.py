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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from tests.fuzz import wire
from tests.fuzz.checks import Findings, jsonrpc_problems, refused_frame, text_problems
from tests.fuzz.frames import Drawn, run_frame_examples
from tests.fuzz.seed import seed_pool
from tests.fuzz.values import Pool
from tests.raw_stdio import RawStdio

pytestmark = pytest.mark.timeout(300)
REPLY_SECONDS = 60.0


class Stdio(RawStdio):
    """The raw server, each frame followed by its probe."""

    def __init__(self, home: Path) -> None:
        super().__init__(home, reply_within=REPLY_SECONDS)
        self.ids = itertools.count(1)

    def exchange(self, line: bytes) -> list[Any]:
        """Send `line`, then a probe; every frame that came before the probe's reply."""
        probe = f"probe-{next(self.ids)}"
        self.send(line)
        self.send(
            {
                "jsonrpc": "2.0",
                "id": probe,
                "method": "tools/call",
                "params": {"name": "slowave_recall", "arguments": {}},
            }
        )
        frames = []
        while True:
            frame = self.read()
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


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stdio, Pool]]:
    server = Stdio(tmp_path_factory.mktemp("fuzz-stdio"))
    try:
        server.initialize("fuzz")
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

    def exchange(data: st.DataObject, drawn: Drawn) -> list[Any]:
        def send() -> tuple[Any, list[str], bool]:
            frames = server.exchange(drawn.line)
            problems, refused = _problems(drawn.frame, frames, corrupted=drawn.corrupted)
            return frames, problems, refused

        frames = findings.guarded("stdio", str(drawn.tool), drawn.frame, server.db_path, send)
        results = [reply.get("result") if isinstance(reply, dict) else None for reply in frames]
        return [r.get("structuredContent") for r in results if isinstance(r, dict)]

    run_frame_examples(400, pool=pool, next_id=lambda: next(server.ids), exchange=exchange)
    stderr = server.close()
    findings.assert_clean(log=stderr, at_least=400)
    assert server.process.returncode == 0, stderr[-3000:]

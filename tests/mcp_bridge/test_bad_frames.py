"""A stdin line the SDK cannot parse gets a JSON-RPC error, a line on stderr, and no hang.

Raw pipes, not the SDK's client: the client cannot send these frames. Each case sends one bad
frame to a running `manage.py mcp_serve`, expects its error reply promptly (carrying the
request id when the frame still shows it), then checks that the server still answers.
"""

from __future__ import annotations

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

from tests.e2e_support import REPO_ROOT, server_args, server_env

REPLY_WITHIN_SECONDS = 15.0  # one reply from a warm server, on a busy machine
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
DEEP = "[" * 5000 + "]" * 5000


class RawServer:
    """`mcp_serve` on pipes: frames in as text lines, replies out as parsed JSON."""

    def __init__(self, home: Path) -> None:
        self.stderr_path = home / "stderr.log"
        self._stderr = self.stderr_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, *server_args()],
            cwd=REPO_ROOT,
            env=server_env(home, {"SLOWAVE_EMBEDDER": "hash"}) | {"PATH": os.environ["PATH"]},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def send(self, frame: bytes | str | dict[str, Any]) -> None:
        text = frame if isinstance(frame, str | bytes) else json.dumps(frame)
        assert self.process.stdin is not None
        self.process.stdin.write((text if isinstance(text, bytes) else text.encode()) + b"\n")
        self.process.stdin.flush()

    def reply(self) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=REPLY_WITHIN_SECONDS)
        except queue.Empty:
            pytest.fail(f"no reply within {REPLY_WITHIN_SECONDS} s")
        frame: dict[str, Any] = json.loads(line)
        return frame

    def request(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> Any:
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)
        reply = self.reply()
        assert reply["id"] == request_id and "result" in reply, reply
        return reply["result"]

    def close(self) -> str:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self._stderr.close()
        return self.stderr_path.read_text()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    raw = RawServer(tmp_path_factory.mktemp("bad-frames"))
    try:
        raw.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-frames", "version": "1"},
            },
        )
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # A tool call waits for migrations, so their output is over before the cases log.
        raw.request(2, "tools/call", {"name": "slowave_recall", "arguments": {}})
        yield raw
    finally:
        if raw.process.poll() is None:
            raw.close()


def _call(request_id: int, arguments: str) -> str:
    """A tools/call frame with `arguments` spliced in as raw JSON text."""
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"slowave_remember","arguments":{arguments}}}}}'
    )


LONE = "\ud801".encode("utf-8", "surrogatepass")

CASES = [
    # A string cut inside an emoji, as JavaScript's JSON.stringify writes it.
    ("lone-surrogate", _call(11, '{"content":"cut \\ud83d"}'), PARSE_ERROR, 11, "surrogate"),
    ("deep-nesting", _call(12, '{"content":' + DEEP + "}"), PARSE_ERROR, 12, "recursion"),
    # Half a pair followed by another escape: the SDK's parser reads it as U+FFFD and would
    # answer under an id the sender never used. Refused; an id holding one is unanswerable.
    (
        "surrogate-then-escape",
        _call(18, '{"content":"\\ud801\\u658d"}'),
        PARSE_ERROR,
        18,
        "surrogate",
    ),
    (
        "surrogate-in-id",
        '{"jsonrpc":"2.0","id":"\\ud801\\u658dV","method":"ping"}',
        PARSE_ERROR,
        None,
        "surrogate",
    ),
    # The id after the deep part: the tolerant scan still finds it, not params' own "id".
    (
        "deep-nesting-id-last",
        '{"jsonrpc":"2.0","method":"tools/list","params":{"id":99,"x":' + DEEP + '},"id":"last"}',
        PARSE_ERROR,
        "last",
        "recursion",
    ),
    # A surrogate encoded on its own (not UTF-8): the SDK would read it as U+FFFD.
    (
        "surrogate-bytes",
        b'{"jsonrpc":"2.0","id":19,"method":"ping","params":{"x":"' + LONE + b'"}}',
        PARSE_ERROR,
        19,
        "UTF-8",
    ),
    (
        "surrogate-bytes-in-id",
        b'{"jsonrpc":"2.0","id":"' + LONE + b'V","method":"ping"}',
        PARSE_ERROR,
        None,
        "UTF-8",
    ),
    ("not-json", "hello, server", PARSE_ERROR, None, "Parse error"),
    ("truncated", '{"jsonrpc":"2.0","id":14,"method":"tools/li', PARSE_ERROR, 14, "EOF"),
    (
        "batch",
        '[{"jsonrpc":"2.0","id":15,"method":"ping"},{"jsonrpc":"2.0","id":16,"method":"ping"}]',
        INVALID_REQUEST,
        None,
        "batch",
    ),
    ("method-not-a-string", '{"jsonrpc":"2.0","id":17,"method":7}', INVALID_REQUEST, 17, "method"),
    ("not-an-object", "42", INVALID_REQUEST, None, "object"),
]


@pytest.mark.parametrize(
    ("frame", "code", "request_id", "words"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_it_answers_an_unparseable_frame_with_a_json_rpc_error(
    server: RawServer, frame: bytes | str, code: int, request_id: int | str | None, words: str
) -> None:
    server.send(frame)
    reply = server.reply()
    assert reply["jsonrpc"] == "2.0" and "result" not in reply, reply
    assert reply["id"] == request_id, reply
    assert reply["error"]["code"] == code, reply
    assert words in reply["error"]["message"], reply
    # Still serving: the next valid request is answered.
    assert len(server.request(100, "tools/list")["tools"]) == 5


def test_it_logs_one_stderr_line_per_refused_frame_and_answers_no_broken_response(
    server: RawServer,
) -> None:
    # JSON-RPC forbids replying to a response, even a broken one: the next reply is the "{"'s.
    server.send('{"jsonrpc":"2.0","id":3,"result":"not an object"}')
    server.send("{")
    assert server.reply() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": PARSE_ERROR,
            "message": "Parse error: EOF while parsing an object at line 1 column 1",
        },
    }
    stderr = server.close()
    refused = [line for line in stderr.splitlines() if "stdin: refused" in line]
    assert len(refused) == len(CASES) + 2, stderr  # every case, the response, the "{"
    assert all(line.startswith("stdin: refused a ") for line in refused), refused
    assert server.process.returncode == 0

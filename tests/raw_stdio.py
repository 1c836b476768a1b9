"""`manage.py mcp_serve` on raw pipes: byte lines in, parsed JSON-RPC frames out.

For the frames the SDK's client cannot send (literal NaN, lone surrogates, invalid UTF-8,
truncated or batched frames, hostile ids): tests/mcp_bridge/test_bad_frames.py,
test_nonfinite_context.py and test_fuzz_stdio.py. Everything else talks to the server through
tests/e2e_support.py's real client.

    with raw_stdio(tmp_path, client_name="my-test") as server:   # initialized
        server.send('{"jsonrpc":"2.0","id":7,"method":"ping","params":' + "[" * 5000 ...)
        reply = server.read()                                    # the next frame, parsed
        stderr = server.close()

The server runs the `hash` embedder: these tests are about frames, and the real model would
only add load.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import REPO_ROOT, server_args, server_env

PROTOCOL_VERSION = "2025-11-25"
STARTUP_SECONDS = 60.0


class RawStdio:
    """One server process; replies are read on a thread so a silent server cannot hang a test."""

    def __init__(self, home: Path, *, reply_within: float) -> None:
        self.home = home
        self.db_path = home / "slowave.sqlite3"
        self.stderr_path = home / "stderr.log"
        self.reply_within = reply_within
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
        """One line: bytes and text as given, a dict as its JSON."""
        text = frame if isinstance(frame, str | bytes) else json.dumps(frame)
        assert self.process.stdin is not None
        self.process.stdin.write((text if isinstance(text, bytes) else text.encode()) + b"\n")
        self.process.stdin.flush()

    def read(self, *, within: float | None = None) -> Any:
        """The next frame the server wrote; `{"not JSON": text}` for a line that is not JSON."""
        wait = within or self.reply_within
        try:
            line = self._lines.get(timeout=wait)
        except queue.Empty:
            alive = self.process.poll() is None
            pytest.fail(f"no reply within {wait} s (server alive: {alive})")
        try:
            return json.loads(line)
        except ValueError:
            return {"not JSON": line.decode("utf-8", "replace")}

    def request(
        self,
        request_id: int,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        within: float | None = None,
    ) -> Any:
        """A well-formed request; its result (the reply must carry one)."""
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)
        reply = self.read(within=within)
        assert reply["id"] == request_id and "result" in reply, reply
        return reply["result"]

    def initialize(self, client_name: str) -> None:
        info = {"name": client_name, "version": "1"}
        params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": info}
        # A cold start (imports, on a busy machine) may take longer than a warm reply.
        self.request(0, "initialize", params, within=max(self.reply_within, STARTUP_SECONDS))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> str:
        """End the server by closing its stdin; what it logged on stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self._stderr.close()
        return self.stderr_path.read_text(errors="replace")


@contextmanager
def raw_stdio(home: Path, *, client_name: str, reply_within: float) -> Iterator[RawStdio]:
    """An initialized server in `home`, closed afterwards unless the test closed it."""
    server = RawStdio(home, reply_within=reply_within)
    try:
        server.initialize(client_name)
        yield server
    finally:
        if server.process.poll() is None:
            server.close()

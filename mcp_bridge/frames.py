"""Frames in over stdio: reading stdin, and what to answer a line the SDK cannot parse.

Lives here: the stdin reader the stdio transport consumes (holding end of input until every
request it read has been answered), the diagnosis of a line the SDK's
message parser refused (not JSON, a lone UTF-16 surrogate, nesting too deep, truncated, a
batch array, the wrong shape), the request id recovered from it where possible, and the rule
for when no reply is due. Does not live here: deciding what parses and writing the error reply
(mcp_bridge.server, the only module that imports the SDK).

The SDK's own reader drops a line it cannot parse without a word, leaving the client to wait
for its timeout; the diagnosis uses pydantic-core's parser, the one the SDK uses, so a line is
judged by the rules that refused it.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

import anyio
import pydantic_core
from anyio.abc import ObjectSendStream

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

# One backslash escape; matching them left to right keeps an escaped backslash from
# passing for the start of a \u escape.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
_ID_VALUE = re.compile(r'\s*:\s*(-?(?:0|[1-9][0-9]*)(?![0-9.eE])|"(?:[^"\\]|\\.)*")')
_MESSAGE_KEYS = ("method", "result", "error")


@dataclass(frozen=True)
class Rejection:
    """The error reply owed for one refused line; `reply` False: log it, answer nothing."""

    code: int
    message: str
    id: int | str | None
    reply: bool = True


class Outstanding:
    """Requests read from stdin that have not been answered yet, by id.

    The SDK cancels every request in flight once its input ends, answering each
    `Connection closed`: a client that writes its calls and closes stdin (a pipe, a script)
    would lose all of them. The reader holds end of input until this set drains.
    """

    # At end of input, give up on the rest once no answer has gone out for this long: a request
    # the SDK never answers (a malformed id it drops, say) must not keep the process alive.
    IDLE_SECONDS = 20.0

    def __init__(self) -> None:
        self._count: dict[str, int] = {}
        self._drained = anyio.Event()
        self._drained.set()
        self._progress = anyio.Event()

    def read(self, line: str) -> None:
        """Note a frame the server will handle: a request owes an answer, a cancel settles one."""
        try:
            value = json.loads(line)
        except ValueError:
            return
        if not isinstance(value, dict) or not isinstance(value.get("method"), str):
            return  # a response to one of our requests: nothing is owed for it
        if "id" in value:
            self._add(value["id"], 1)
        elif value["method"] == "notifications/cancelled":
            # A request its sender cancelled is never answered (JSON-RPC), so stop owing it.
            params = value.get("params")
            if isinstance(params, dict) and "requestId" in params:
                self._add(params["requestId"], -1)

    def answered(self, request_id: object) -> None:
        self._progress.set()
        self._add(request_id, -1)

    async def drained(self) -> None:
        """Until every request read is answered, or answers stop coming for IDLE_SECONDS."""
        while not self._drained.is_set():
            self._progress = anyio.Event()
            with anyio.move_on_after(self.IDLE_SECONDS):
                async with anyio.create_task_group() as group:

                    async def _until(event: anyio.Event) -> None:
                        await event.wait()
                        group.cancel_scope.cancel()

                    group.start_soon(_until, self._drained)
                    group.start_soon(_until, self._progress)
            if not self._drained.is_set() and not self._progress.is_set():
                logger.warning(
                    "end of input: %d request(s) still unanswered after %.0f s without an "
                    "answer; exiting without them",
                    len(self._count),
                    self.IDLE_SECONDS,
                )
                return

    def _add(self, request_id: object, step: int) -> None:
        key = _id_key(request_id)
        count = self._count.get(key, 0) + step
        if count > 0:
            self._count[key] = count
            self._drained = anyio.Event() if self._drained.is_set() else self._drained
        else:
            self._count.pop(key, None)
            if not self._count:
                self._drained.set()


def _id_key(request_id: object) -> str:
    # As the SDK correlates ids: "7", 7 and 7.0 are one request.
    if isinstance(request_id, float) and request_id.is_integer():
        request_id = int(request_id)
    if isinstance(request_id, str):
        try:
            return json.dumps(int(request_id))
        except ValueError:
            pass
    return json.dumps(request_id)


class LineSource(Protocol):
    """Where frames come from: stdin itself, or the reader that claimed it first (greeter)."""

    def readline(self) -> bytes: ...


class StdinFrames:
    """The lines of stdin that `accepts`, as the async iterable the SDK's transport reads.

    Every other non-blank line goes to `rejected` as the error it is owed, and is logged. Reads
    run in a worker thread the event loop may abandon: the SDK's own reader cannot be cancelled
    while blocked on stdin, so a server that had to stop (its database unusable) went on
    waiting until the client closed stdin.
    """

    def __init__(
        self,
        binary: LineSource,
        *,
        accepts: Callable[[str], bool],
        rejected: ObjectSendStream[Rejection],
        outstanding: Outstanding | None = None,
    ) -> None:
        self._binary, self._accepts, self._rejected = binary, accepts, rejected
        self._outstanding = outstanding

    def __aiter__(self) -> StdinFrames:
        return self

    async def __anext__(self) -> str:
        while True:
            raw = await anyio.to_thread.run_sync(self._binary.readline, abandon_on_cancel=True)
            if not raw:
                if self._outstanding is not None:
                    await self._outstanding.drained()
                raise StopAsyncIteration
            try:
                line, well_formed = raw.decode("utf-8"), True
            except UnicodeDecodeError:  # read on, as the SDK would, to diagnose and find the id
                line, well_formed = raw.decode("utf-8", errors="replace"), False
            if not line.strip():
                continue
            # Bytes that are not UTF-8 (a surrogate encoded on its own, say) and escaped lone
            # surrogates both reach the SDK as U+FFFD, so it would answer under an id its
            # sender never used, or store text it never sent: refused here, whatever it thinks.
            if well_formed and _lone_surrogate(line) is None and self._accepts(line):
                if self._outstanding is not None:
                    self._outstanding.read(line)
                return line
            rejection = diagnose(line) if well_formed else not_utf8(line)
            logger.warning(
                "stdin: refused a %d-byte frame (%d, id %s): %s",
                len(raw),
                rejection.code,
                json.dumps(rejection.id),
                rejection.message,
            )
            if rejection.reply:
                await self._rejected.send(rejection)


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The protocol's stdin on a private descriptor; fd 0 reads the null device meanwhile.

    As the SDK does when it reads stdin itself: nothing else in the process, nor a child it
    starts, can take protocol bytes.
    """
    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # started with fd 0 closed: nothing to serve, so end at once
        with open(os.devnull, "rb") as empty:
            yield empty
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # Never closed: an abandoned read may still block on it after the transport ends.
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        os.dup2(private, 0)


def diagnose(line: str) -> Rejection:
    """The JSON-RPC error for `line`, a frame the SDK could not accept as a message."""
    line = line.rstrip("\r\n")  # the frame's end, not a control character inside it
    try:
        value = pydantic_core.from_json(line)
        if _lone_surrogate(line) is not None:
            raise ValueError("lone surrogate")
    except ValueError as exc:
        return Rejection(PARSE_ERROR, _parse_error_message(line, exc), _whole_id(line))
    if isinstance(value, list):
        return Rejection(
            INVALID_REQUEST,
            "Invalid Request: batch arrays are not supported (MCP removed JSON-RPC batching); "
            "send one message per line",
            None,
        )
    if not isinstance(value, dict):
        return Rejection(INVALID_REQUEST, "Invalid Request: a message must be a JSON object", None)
    request_id = _valid_id(value.get("id"))
    if "method" not in value and ("result" in value or "error" in value):
        # A malformed response to one of our requests: JSON-RPC forbids answering a response.
        return Rejection(INVALID_REQUEST, "malformed response: " + _shape_fault(value), None, False)
    return Rejection(INVALID_REQUEST, "Invalid Request: " + _shape_fault(value), request_id)


def not_utf8(line: str) -> Rejection:
    """The error for a frame whose bytes are not UTF-8 (`line`: decoded with replacement)."""
    return Rejection(
        PARSE_ERROR,
        "Parse error: the frame is not valid UTF-8 (a string cut inside a character, or "
        "a surrogate encoded on its own?): send whole characters as UTF-8",
        _whole_id(line.rstrip("\r\n")),
    )


def _parse_error_message(line: str, exc: ValueError) -> str:
    lone = _lone_surrogate(line)
    if lone is not None:
        escape, column = lone
        return (
            f"Parse error: lone UTF-16 surrogate {escape} at column {column}; "
            "a string was probably cut inside a character: send whole surrogate pairs"
        )
    return f"Parse error: {exc}"


def _lone_surrogate(line: str) -> tuple[str, int] | None:
    """The first `\\uD800`-`\\uDFFF` escape that is not half of a pair, and its column."""
    high: re.Match[str] | None = None
    for match in _ESCAPE.finditer(line):
        unit = int(match.group(1), 16) if match.group(1) else -1
        if high is not None:
            if 0xDC00 <= unit <= 0xDFFF and match.start() == high.end():
                high = None
                continue
            break
        if 0xD800 <= unit <= 0xDBFF:
            high = match
        elif 0xDC00 <= unit <= 0xDFFF:
            return match.group(0), match.start() + 1
    return None if high is None else (high.group(0), high.start() + 1)


def _shape_fault(value: dict[str, Any]) -> str:
    if value.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in value and _valid_id(value["id"]) is None and "method" in value:
        return "id must be an integer or a string"
    if not any(key in value for key in _MESSAGE_KEYS):
        return "a message needs a method (or, as a response, a result or an error)"
    if "method" in value and not isinstance(value["method"], str):
        return "method must be a string"
    if "params" in value and not isinstance(value["params"], dict | None):
        return "params must be an object"
    if "result" in value and not isinstance(value["result"], dict):
        return "result must be an object"
    return "not a JSON-RPC 2.0 request, notification or response"


def _valid_id(value: object) -> int | str | None:
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _whole_id(line: str) -> int | str | None:
    """The recovered id, unless it holds half a surrogate pair: no reply could carry it."""
    found = recover_id(line)
    if isinstance(found, str) and any(0xD800 <= ord(c) <= 0xDFFF or c == "\ufffd" for c in found):
        return None
    return found


def recover_id(text: str) -> int | str | None:
    """The top-level `"id"` of a frame that does not parse, when it can still be read.

    A tolerant scan: it tracks strings and nesting only, so a frame cut short, or broken
    deeper down, still yields the id its sender will wait on; an `"id"` inside params never
    counts.
    """
    start = len(text) - len(text.lstrip())
    if not text.startswith("{", start):
        return None
    depth, i, n = 0, start, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = _string_end(text, i)
            if end < 0:
                return None
            if depth == 1 and text[i:end] == '"id"':
                match = _ID_VALUE.match(text, end)
                if match is not None:
                    return _id_literal(match.group(1))
            i = end
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return None
        i += 1
    return None


def _string_end(text: str, quote: int) -> int:
    """Index just past the string literal opening at `quote`; -1 if it never closes."""
    i = quote + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return -1


def _id_literal(literal: str) -> int | str | None:
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    return _valid_id(value)

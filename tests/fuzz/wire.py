"""The wire: JSON text as broken clients write it, raw-body corruptions, JSON-RPC frames.

Literal NaN and Infinity, lone surrogates escaped or as invalid UTF-8, truncation, a byte-order
mark, trailing garbage, duplicate keys, 5,000-deep nesting, a 5,000-digit number, UTF-16;
tools/call frames around fuzzed arguments, and frames whose id, method or params are fuzzed.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from tests.fuzz.bodies import TOOLS, mutated, tool_calls
from tests.fuzz.values import Pool, hostile_values


def encoded(value: Any, *, raw_utf8: bool) -> bytes:
    """JSON text of `value` as bytes: NaN/Infinity as Python writes them (not JSON), lone
    surrogates as \\u escapes, or (`raw_utf8`) as the invalid UTF-8 bytes a broken client
    writes."""
    if raw_utf8:
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return json.dumps(value).encode()


DEEP_TEXT = "[" * 5000 + "]" * 5000


@st.composite
def corrupted(draw: st.DrawFn, text: bytes) -> bytes:
    """`text` (a JSON body) broken the ways real clients and attackers break bodies."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return text[: draw(st.integers(0, max(len(text) - 1, 0)))]  # truncated
    if kind == 1:
        return b"\xef\xbb\xbf" + text  # a UTF-8 byte-order mark
    if kind == 2:
        return text + draw(st.sampled_from([b"x", b" {}", b"\x00", b"\n\n{}"]))
    if kind == 3:
        return b'{"content": ' + DEEP_TEXT.encode() + b"}"
    if kind == 4:
        return text.replace(b"{", b'{"a": NaN, "b": -Infinity, ', 1)
    if kind == 5:
        return text.replace(b"{", b'{"scope": "project:dup", ', 1)  # a duplicate key
    if kind == 6 and text.endswith(b"}"):  # a number past Python's int-string digit limit
        return text[:-1] + b', "task_context": {"n": ' + b"9" * 5000 + b"}}"
    if kind == 7:
        return draw(st.sampled_from([b"", b" ", b"null", b"[]", b'"x"', b"\xff\xfe", b"\x80"]))
    if kind == 8:
        return text.decode("utf-8", "replace").encode("utf-16")
    return draw(st.binary(max_size=64))


# --- JSON-RPC frames (MCP over stdio and HTTP) ------------------------------------------------

TOOL_NAMES = st.sampled_from(
    ["slowave_nope", "", "SLOWAVE_ACTIVATE", "slowave_activate\x00", " slowave_recall", "x" * 300]
)
METHODS = st.sampled_from(
    [
        "tools/list",
        "ping",
        "initialize",
        "resources/list",
        "prompts/list",
        "tools/call",
        "completion/complete",
        "logging/setLevel",
        "notifications/cancelled",
        "nope",
        "",
        "rpc.discover",
        "notifications/initialized",
        "tasks/list",
    ]
)


def valid_id(value: Any) -> bool:
    """A JSON-RPC request id the server can echo (a string or integer, not a bool)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


@st.composite
def call_frames(draw: st.DrawFn, pool: Pool, request_id: int) -> tuple[dict[str, Any], str | None]:
    """A tools/call frame with fuzzed arguments (rarely an unknown tool name); the tool called."""
    tool, arguments = draw(tool_calls(pool))
    if draw(st.integers(0, 15)) == 0:
        tool = draw(TOOL_NAMES)
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if draw(st.integers(0, 9)) == 0:
        params["_meta"] = draw(hostile_values(pool))
    frame = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return frame, tool


@st.composite
def hostile_frames(draw: st.DrawFn, pool: Pool, request_id: int) -> Any:
    """A JSON-RPC frame with its envelope fuzzed: id, method, params, jsonrpc, batches."""
    frame: Any = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": draw(METHODS),
        "params": {"name": draw(st.sampled_from(TOOLS)), "arguments": {}},
    }
    for _ in range(draw(st.integers(1, 2))):
        frame = draw(mutated(frame, pool))
    if draw(st.integers(0, 9)) == 0:
        frame = [frame, {"jsonrpc": "2.0", "id": request_id + 1, "method": "ping"}]
    return frame

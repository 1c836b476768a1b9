"""A stdin line the SDK cannot parse gets a JSON-RPC error, a line on stderr, and no hang.

Raw pipes, not the SDK's client: the client cannot send these frames. Each case sends one bad
frame to a running `manage.py mcp_serve`, expects its error reply promptly (carrying the
request id when the frame still shows it), then checks that the server still answers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.raw_stdio import RawStdio, raw_stdio

REPLY_WITHIN_SECONDS = 15.0  # one reply from a warm server, on a busy machine
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
DEEP = "[" * 5000 + "]" * 5000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawStdio]:
    home = tmp_path_factory.mktemp("bad-frames")
    with raw_stdio(home, client_name="raw-frames", reply_within=REPLY_WITHIN_SECONDS) as raw:
        # A tool call waits for migrations, so their output is over before the cases log.
        raw.request(2, "tools/call", {"name": "slowave_recall", "arguments": {}})
        yield raw


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
    server: RawStdio, frame: bytes | str, code: int, request_id: int | str | None, words: str
) -> None:
    server.send(frame)
    reply = server.read()
    assert reply["jsonrpc"] == "2.0" and "result" not in reply, reply
    assert reply["id"] == request_id, reply
    assert reply["error"]["code"] == code, reply
    assert words in reply["error"]["message"], reply
    # Still serving: the next valid request is answered.
    assert len(server.request(100, "tools/list")["tools"]) == 5


def test_it_logs_one_stderr_line_per_refused_frame_and_answers_no_broken_response(
    server: RawStdio,
) -> None:
    # JSON-RPC forbids replying to a response, even a broken one: the next reply is the "{"'s.
    server.send('{"jsonrpc":"2.0","id":3,"result":"not an object"}')
    server.send("{")
    assert server.read() == {
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

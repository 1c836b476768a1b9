"""Fuzzing every REST route and every MCP tool over HTTP, against one live `slowave up`.

Reproducible (hypothesis with a fixed seed and a fixed number of examples, no shrinking) and
bounded in time. Bodies start valid, from real ids of two scopes (tests/fuzz/seed.py), and are
then mutated with hostile values (tests/fuzz/bodies.py); headers, methods, paths, query
strings and raw bodies are fuzzed too. Every reply must be the Slowave envelope or a JSON-RPC
error, never a 5xx or a traceback, and a refused call (and any read) must leave the SQLite
file as it was (tests/fuzz/checks.py). Problems are collected, not raised one by one, so a
failing run lists each distinct one with the request that caused it.
Hash embedder: these are the mechanics of the edges, not retrieval quality.
"""

from __future__ import annotations

import http.client
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import strategies as st

from tests.api.live import slowave_up
from tests.cli.runner import slowave
from tests.fuzz import bodies, values, wire
from tests.fuzz.bodies import mutated, tool_calls
from tests.fuzz.checks import (
    Findings,
    envelope_problems,
    jsonrpc_problems,
    refused_frame,
    rest_problems,
    text_problems,
)
from tests.fuzz.frames import Drawn, run_frame_examples
from tests.fuzz.seed import seed_pool, sweep_target
from tests.fuzz.values import Pool, hostile_values, pick, run_examples

pytestmark = pytest.mark.timeout(300)
JSON = "application/json"
VERBS = {tool: f"/api/{tool.removeprefix('slowave_')}" for tool in bodies.TOOLS}
READS = (  # path (with {} for an id), the kind of id, query parameters
    ("/api/memories", None, ("limit", "offset", "scope", "status", "type", "q", "order")),
    ("/api/memories/{}", "memories", ()),
    ("/api/sessions", None, ("limit", "offset", "scope", "status")),
    ("/api/sessions/{}", "sessions", ()),
    ("/api/retrievals/{}", "retrievals", ("all",)),
    ("/api/procedures", None, ("limit", "offset", "scope", "status")),
    ("/api/procedures/{}", "procedures", ()),
    ("/api/stats", None, ("scope",)),
    ("/api/health", None, ()),
)
QUERY_VALUES = st.sampled_from(
    ["10", "0", "-1", "201", "1000000001", "9" * 30, "1e3", "1.5", "nan", "inf", "true"]
    + ["false", "yes", "", " ", "active", "forgotten", "open", "ended", "fact", "%", "_"]
)
ODD_PATHS = st.sampled_from(
    ["/api/nope", "/api/activate/", "/api//activate", "/api/memories/sch_1/x", "/api/%ff"]
    + ["/api/memories/%2F", "/api/", "/api/import/", "/api/docs", "/api/openapi.json"]
)
AUTH_VARIANTS = ["Bearer", "Bearer ", "Bearer nope", "Basic dXNlcjpwYXNz", "Bearer " + "x" * 5000]
CONTENT_TYPES = [
    "text/plain",
    "application/json; charset=latin-1",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/JSON",
    "application/json-patch+json",
    "",
    "application/json; charset=utf-16",
]
ACCEPTS = ["application/json", "text/event-stream", "text/html", "*/*", ""]


@dataclass
class Server:
    host: str
    port: int
    token: str
    home: Path
    pool: Pool = field(init=False)
    export_lines: list[str] = field(default_factory=list)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1000))

    @property
    def db_path(self) -> Path:
        return self.home / "slowave.sqlite3"

    def headers(self, **extra: str | bytes | None) -> dict[str, str | bytes]:
        base: dict[str, str | bytes | None] = {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": JSON,
        }
        return {k: v for k, v in (base | extra).items() if v is not None}

    def request(
        self, method: str, path: str, body: bytes | None, headers: dict[str, Any]
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def verb(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        status, body = self.request(
            "POST", VERBS[tool], json.dumps(arguments).encode(), self.headers()
        )
        assert status == 200, body
        data: dict[str, Any] = json.loads(body)["data"]
        return data


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("fuzz-http")
    with slowave_up(home, SLOWAVE_EMBEDDER="hash") as live:
        host, port = live.base.removeprefix("http://").split(":")
        srv = Server(host=host, port=int(port), token=live.token, home=home)
        srv.pool = seed_pool(srv.verb)
        export = home / "seed-export.jsonl"
        made = slowave(home, "export", "--scope", srv.pool.scope, "--out", str(export))
        assert made.code == 0, made.err
        srv.export_lines = export.read_text().splitlines()
        yield srv
        assert not text_problems((home / "up.log").read_text()), (home / "up.log").read_text()


def _finish(findings: Findings, server: Server, at_least: int) -> None:
    findings.assert_clean(log=(server.home / "up.log").read_text(), at_least=at_least)


def _quoted(value: Any) -> str:
    """`value` for a path segment or query value, percent-encoded (lone surrogates as the
    invalid UTF-8 they would be). Cut short enough that the whole request line stays within
    uvicorn's limit: an ASCII id of 5,000 digits goes whole."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text if text.isascii() and len(text) <= 6000 else text[:1500]
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def _post(
    server: Server,
    findings: Findings,
    route: str,
    path: str,
    request: Any,
    body: bytes,
    headers: dict[str, Any],
    *,
    tool: str | None = None,
    writes: bool = True,
) -> tuple[int, bytes]:
    """POST and check; `writes` False: even a success must write nothing (a dry run)."""

    def send() -> tuple[Any, list[str], bool]:
        status, reply = server.request("POST", path, body, headers)
        return (status, reply), rest_problems(status, reply, tool=tool), status != 200 or not writes

    status, reply = findings.guarded("rest", route, request, server.db_path, send)
    return status, reply


def _header_variant(data: st.DataObject, server: Server) -> dict[str, Any]:
    """Usually the right headers; sometimes a bad token, an odd Content-Type, a client name."""
    kind = data.draw(st.integers(0, 19))
    if kind == 0:
        return server.headers(Authorization=data.draw(st.sampled_from([None, *AUTH_VARIANTS])))
    if kind == 1:
        return server.headers(
            **{"Content-Type": data.draw(st.sampled_from([None, *CONTENT_TYPES]))}
        )
    if kind == 2:
        client = data.draw(st.sampled_from(["x" * 300, "caf\xe9", "🙂".encode(), "", "a;b=c"]))
        return server.headers(**{"X-Slowave-Client": client, "X-Slowave-Client-Version": client})
    return server.headers()


# --- the agent verbs --------------------------------------------------------------------------


def test_it_answers_every_fuzzed_agent_verb_with_an_envelope_and_no_write_on_refusal(
    server: Server,
) -> None:
    findings, pool = Findings(), server.pool

    def example(data: st.DataObject) -> None:
        tool, arguments = data.draw(tool_calls(pool))
        raw_utf8 = data.draw(st.integers(0, 4)) == 0
        body = wire.encoded(arguments, raw_utf8=raw_utf8)
        if data.draw(st.integers(0, 9)) == 0:
            body = data.draw(wire.corrupted(body))
        headers = _header_variant(data, server)
        status, reply = _post(
            server, findings, VERBS[tool], VERBS[tool], arguments, body, headers, tool=tool
        )
        if status == 200:
            pool.learn(tool, arguments, json.loads(reply)["data"])

    run_examples(350, example)
    _finish(findings, server, 350)


# --- reads, staff controls, import, odd methods and paths -------------------------------------


def _read(data: st.DataObject, server: Server, findings: Findings) -> None:
    path, kind, params = data.draw(st.sampled_from(READS))
    if kind is not None:
        ids = sorted(getattr(server.pool, kind))
        ident = data.draw(
            pick(ids, "sch_1") | st.sampled_from(values.UNKNOWN_IDS) | hostile_values(server.pool)
        )
        path = path.format(_quoted(ident))
    query = []
    for name in params + ("unknown", "limit"):
        if data.draw(st.integers(0, 2)) == 0:
            value = data.draw(
                QUERY_VALUES | pick(server.pool.all_ids(), "sch_1") | hostile_values(server.pool)
            )
            query.append(f"{quote(name)}={_quoted(value)}")
    if query:
        path += "?" + "&".join(query)

    def send() -> tuple[Any, list[str], bool]:
        status, reply = server.request("GET", path, None, _header_variant(data, server))
        return (status, reply), rest_problems(status, reply), True  # a read never writes

    findings.guarded("rest", "GET " + path.split("?")[0][:60], path, server.db_path, send)


def _staff(data: st.DataObject, server: Server, findings: Findings) -> None:
    kind = data.draw(st.sampled_from(["memories", "procedures"]))
    ids = sorted(getattr(server.pool, kind))
    ident = data.draw(
        pick(ids, "sch_1") | st.sampled_from(values.UNKNOWN_IDS) | hostile_values(server.pool)
    )
    action = data.draw(st.sampled_from(["forget", "unforget"]))
    body: Any = {"reason": data.draw(bodies.WORDS)}
    for _ in range(data.draw(st.integers(0, 2))):
        body = data.draw(mutated(body, server.pool))
    raw = b"" if data.draw(st.integers(0, 5)) == 0 else wire.encoded(body, raw_utf8=False)
    route = f"/api/{kind}/{{id}}/{action}"
    path = f"/api/{kind}/{_quoted(ident)}/{action}"
    _post(
        server,
        findings,
        route,
        path,
        {"id": ident, "body": body},
        raw,
        _header_variant(data, server),
    )


@st.composite
def _transcript(draw: st.DrawFn, pool: Pool) -> dict[str, Any]:
    line = st.fixed_dictionaries(
        {
            "session_key": st.sampled_from(["fuzz-k1", "fuzz-k2"]),
            "role": st.sampled_from(["user", "assistant", "tool", "system"]),
            "content": bodies.WORDS,
        },
        optional={"occurred_at": st.just("2024-05-01T10:00:00Z"), "metadata": st.just({"a": 1})},
    )
    lines: list[Any] = draw(st.lists(line, min_size=1, max_size=3))
    for _ in range(draw(st.integers(0, 2))):
        lines = draw(mutated(lines, pool))
    texts = [json.dumps(item) for item in lines] if isinstance(lines, list) else [json.dumps(lines)]
    body = {"format": "transcript", "scope": pool.scope, "content": "\n".join(texts)}
    if draw(st.booleans()):
        body["dry_run"] = draw(st.booleans())
    return body


@st.composite
def _export(draw: st.DrawFn, pool: Pool, lines: list[str]) -> dict[str, Any]:
    records: Any = [json.loads(line) for line in lines]
    for _ in range(draw(st.integers(0, 2))):
        records = draw(mutated(records, pool))
    texts = [json.dumps(r) for r in records] if isinstance(records, list) else [json.dumps(records)]
    body = {"format": "export", "content": "\n".join(texts)}
    if draw(st.booleans()):
        body["remap"] = draw(st.booleans())
    return body


def _import(data: st.DataObject, server: Server, findings: Findings) -> None:
    body: Any = data.draw(_transcript(server.pool) | _export(server.pool, server.export_lines))
    if data.draw(st.integers(0, 3)) == 0:
        body = data.draw(mutated(body, server.pool))
    dry = isinstance(body, dict) and body.get("dry_run") is True
    raw = wire.encoded(body, raw_utf8=data.draw(st.integers(0, 5)) == 0)
    _post(
        server,
        findings,
        "/api/import",
        "/api/import",
        body,
        raw,
        _header_variant(data, server),
        writes=not dry,
    )


def _odd(data: st.DataObject, server: Server, findings: Findings) -> None:
    """A method a route does not take, or a path no route takes."""
    path = data.draw(ODD_PATHS | st.sampled_from([*VERBS.values(), "/api/memories", "/api/import"]))
    method = data.draw(st.sampled_from(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "POST"]))
    body = b"{}" if method != "GET" else None

    def send() -> tuple[Any, list[str], bool]:
        status, reply = server.request(method, path, body, server.headers())
        problems = [] if path.endswith(("/docs", "openapi.json")) else rest_problems(status, reply)
        return (
            (status, reply),
            problems + text_problems(reply.decode("utf-8", "replace")),
            status != 200,
        )

    findings.guarded("rest", f"{method} {path}", path, server.db_path, send)


def test_it_answers_every_fuzzed_read_staff_and_import_call_with_an_envelope(
    server: Server,
) -> None:
    findings = Findings()
    ops = (_read,) * 5 + (_staff,) * 2 + (_import,) * 2 + (_odd,)

    def example(data: st.DataObject) -> None:
        data.draw(st.sampled_from(ops))(data, server, findings)

    run_examples(350, example)
    _finish(findings, server, 350)


# --- MCP over streamable HTTP -----------------------------------------------------------------


def _mcp_headers(data: st.DataObject, server: Server) -> dict[str, Any]:
    headers = server.headers(Accept="application/json, text/event-stream")
    kind = data.draw(st.integers(0, 9))
    if kind == 0:
        headers["Accept"] = data.draw(st.sampled_from(ACCEPTS))
    elif kind == 1:
        headers = {k: v for k, v in _header_variant(data, server).items()} | {
            "Accept": headers["Accept"]
        }
    elif kind == 2:
        headers["MCP-Protocol-Version"] = data.draw(
            st.sampled_from(["2025-11-25", "1999-01-01", "x", ""])
        )
    elif kind == 3:
        headers["Mcp-Session-Id"] = data.draw(st.sampled_from(["nope", "0" * 64, ""]))
    return headers


def _mcp_reply_problems(sent: Any, status: int, reply: bytes) -> tuple[list[str], bool]:
    """Problems with an /mcp reply, and whether it refused the call."""
    text = reply.decode("utf-8", "replace")
    problems = text_problems(text) + ([f"HTTP {status}"] if status >= 500 else [])
    request_id = (
        sent.get("id") if isinstance(sent, dict) and wire.valid_id(sent.get("id")) else None
    )
    is_request = request_id is not None and isinstance(sent.get("method"), str)
    if not reply.strip():
        missing = is_request and status == 202
        return problems + (["no reply to a request"] if missing else []), True
    try:
        frame = json.loads(text)
    except ValueError:
        return [*problems, "the body is not JSON"], True
    if isinstance(frame, dict) and "ok" in frame and "jsonrpc" not in frame:
        return problems + envelope_problems(frame), True
    frames = frame if isinstance(frame, list) else [frame]
    for item in frames:
        tool = None
        if (
            isinstance(sent, dict)
            and sent.get("method") == "tools/call"
            and isinstance(item, dict)
            and "result" in item
        ):
            params = sent.get("params")
            tool = str(params.get("name")) if isinstance(params, dict) else "?"
        problems += jsonrpc_problems(item, request_id, tool=tool)
    return problems, all(refused_frame(item) for item in frames)


def test_it_answers_every_fuzzed_mcp_http_call_with_an_envelope_or_json_rpc_error(
    server: Server,
) -> None:
    findings = Findings()

    def exchange(data: st.DataObject, drawn: Drawn) -> list[Any]:
        headers = _mcp_headers(data, server)

        def send() -> tuple[Any, list[str], bool]:
            status, reply = server.request("POST", "/mcp", drawn.line, headers)
            problems, refused = _mcp_reply_problems(drawn.frame, status, reply)
            return (status, reply), problems, refused

        status, reply = findings.guarded(
            "mcp-http", str(drawn.tool), drawn.frame, server.db_path, send
        )
        if status != 200 or drawn.tool not in bodies.TOOLS:
            return []
        answer = json.loads(reply)
        result = answer.get("result") if isinstance(answer, dict) else None
        return [(result or {}).get("structuredContent") or {}]

    run_frame_examples(350, pool=server.pool, next_id=lambda: next(server.ids), exchange=exchange)
    _finish(findings, server, 350)


# --- the sweep --------------------------------------------------------------------------------


def test_it_refuses_every_field_of_every_verb_set_to_each_hostile_value_and_writes_nothing(
    server: Server,
) -> None:
    findings = Findings()
    calls = list(bodies.sweep(sweep_target(server.verb, server.pool)))
    for tool, arguments in calls:
        body = wire.encoded(arguments, raw_utf8=False)
        _post(
            server, findings, VERBS[tool], VERBS[tool], arguments, body, server.headers(), tool=tool
        )
    _finish(findings, server, len(calls))


def test_it_answers_every_id_route_for_each_unknown_malformed_or_other_kind_of_id(
    server: Server,
) -> None:
    findings = Findings()
    pool = server.pool
    kinds = (pool.sessions, pool.retrievals, pool.memories, pool.procedures, pool.continuities)
    real = {min(i for i in kind if kind[i] == scope) for kind in kinds for scope in kind.values()}
    ids = [*values.UNKNOWN_IDS, *values.EDGE_STRINGS, *sorted(real), *pool.cursors[:1]]
    routes = [path for path, kind, _ in READS if kind] + [
        f"/api/{kind}/{{}}/{action}"
        for kind in ("memories", "procedures")
        for action in ("forget", "unforget")
    ]
    for route, ident in itertools.product(routes, ids):
        path = route.format(_quoted(ident))
        if route.endswith("forget"):
            body = b'{"reason": "fuzz"}'
            # Real ids are forgotten, then (the unforget route comes next) restored.
            _post(server, findings, route, path, ident, body, server.headers())
            continue

        def send(path: str = path) -> tuple[Any, list[str], bool]:
            status, reply = server.request("GET", path, None, server.headers())
            return (status, reply), rest_problems(status, reply), True  # a read never writes

        findings.guarded("rest", "GET " + route, ident, server.db_path, send)
    _finish(findings, server, len(routes) * len(ids))

"""End-to-end helper: a real `manage.py mcp_serve` over stdio, driven by the SDK's client.

Tests stay synchronous: each server gets its own event loop in a background thread
(an anyio blocking portal), and `McpClient` calls into it. Typical use, one server per
test module:

    from tests.e2e_support import server_fixture
    mcp = server_fixture()                                   # module-scoped fixture

    def test_it_opens_a_session(mcp):
        envelope = mcp.call("slowave_activate", {...})      # {"ok": ..., "data"|"error": ...}

or, for custom environments and crash tests:

    with spawn_server(env={"SLOWAVE_SESSION_IDLE_TIMEOUT": "1"}) as client:
        client.kill()                                        # SIGKILL the server process

Every call checks the envelope contract (structuredContent = text JSON, isError mirrors
`ok: false`) so e2e tests assert it for free.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from slowave_site.bench.window import child_pid

REPO_ROOT = Path(__file__).resolve().parent.parent
# Variables worth passing on; SLOWAVE_* and DATABASE_URL are deliberately NOT inherited, so a
# developer's own settings can never point a test server at a real database. SLOWAVE_MODEL_DIR
# names no memory: the session's one ONNX export (tests/conftest.py).
PASSTHROUGH_ENV = (
    "PYTHONPATH",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "PYTHONDONTWRITEBYTECODE",
    "SLOWAVE_MODEL_DIR",
)
DEFAULT_TIMEOUT = 120.0  # per request: the first embedding call loads the model


class _RawToolCall(types.Request[dict[str, Any], Literal["tools/call"]]):
    """tools/call with params sent as given (e.g. non-object arguments), bypassing the
    client-side typing of CallToolRequestParams."""

    method: Literal["tools/call"] = "tools/call"


@dataclass
class McpClient:
    """A connected client; synchronous methods run on the portal's event loop."""

    portal: BlockingPortal
    session: ClientSession
    home: Path
    db_path: Path
    stderr_path: Path
    pid: int
    startup_seconds: float  # spawn -> tools/list answered (wall clock)
    startup_cpu_seconds: float  # CPU the server had used by then: immune to machine load
    tools: list[types.Tool] = field(default_factory=list)
    initialize_result: types.InitializeResult | None = None

    def call(
        self, name: str, arguments: Any = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Call a tool and return its envelope (after checking the reply contract)."""
        return check_envelope(self.call_result(name, arguments, timeout=timeout))

    def call_result(
        self, name: str, arguments: Any = None, *, timeout: float | None = None
    ) -> types.CallToolResult:
        """The raw CallToolResult; `arguments` may be any JSON value, not only an object."""
        request = _RawToolCall(params={"name": name, "arguments": arguments})
        return self.portal.call(
            lambda: self.session.send_request(
                request,
                types.CallToolResult,
                request_read_timeout_seconds=timeout or DEFAULT_TIMEOUT,
            )
        )

    def list_tools(self) -> list[types.Tool]:
        return self.portal.call(self.session.list_tools).tools

    def kill(self) -> None:
        """SIGKILL the server (crash tests) and wait until it is gone."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while _is_alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.02)

    @property
    def alive(self) -> bool:
        return _is_alive(self.pid)

    def stderr_text(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""


def check_envelope(result: types.CallToolResult) -> dict[str, Any]:
    envelope = result.structured_content
    assert isinstance(envelope, dict) and isinstance(envelope.get("ok"), bool), envelope
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    assert len(texts) == 1 and json.loads(texts[0]) == envelope, (texts, envelope)
    assert result.is_error is (not envelope["ok"]), (result.is_error, envelope)
    return envelope


@contextmanager
def spawn_server(
    *,
    env: Mapping[str, str] | None = None,
    home: str | Path | None = None,
    args: tuple[str, ...] = (),
    client_name: str = "slowave-e2e",
    client_version: str = "1.0",
) -> Iterator[McpClient]:
    """Spawn `manage.py mcp_serve`, initialize, list tools; stop the server on exit.

    `home` defaults to a fresh temporary SLOWAVE_HOME that is removed afterwards; pass one
    (e.g. from tmp_path_factory) to restart a server on the same database. `env` adds or
    overrides variables (SLOWAVE_SESSION_IDLE_TIMEOUT, SLOWAVE_CLIENT_IDENTITY, ...).
    """
    owned = home is None
    home_path = Path(tempfile.mkdtemp(prefix="slowave-e2e-")) if home is None else Path(home)
    home_path.mkdir(parents=True, exist_ok=True)
    marker = uuid.uuid4().hex  # finds our child process even when several share a home
    full_env = server_env(home_path, {"SLOWAVE_E2E_MARKER": marker, **(env or {})})
    stderr_path = home_path / f"mcp_serve-{marker[:8]}.stderr.log"
    params = StdioServerParameters(
        command=sys.executable, args=server_args(*args), env=full_env, cwd=str(REPO_ROOT)
    )
    client_info = types.Implementation(name=client_name, version=client_version)
    try:
        with ExitStack() as stack:
            errlog = stack.enter_context(stderr_path.open("w"))
            portal = stack.enter_context(start_blocking_portal(backend="asyncio"))
            started = time.monotonic()
            try:
                connected = stack.enter_context(
                    portal.wrap_async_context_manager(_connect(params, errlog, client_info, marker))
                )
            except Exception as exc:
                raise RuntimeError(f"mcp_serve failed to start:\n{_tail(stderr_path)}") from exc
            yield McpClient(
                portal=portal,
                session=connected.session,
                home=home_path,
                db_path=Path(full_env.get("SLOWAVE_DB_PATH", home_path / "slowave.sqlite3")),
                stderr_path=stderr_path,
                pid=connected.pid,
                startup_seconds=connected.listed_at - started,
                startup_cpu_seconds=connected.cpu_seconds,
                tools=connected.tools,
                initialize_result=connected.init,
            )
    finally:
        if owned:
            shutil.rmtree(home_path, ignore_errors=True)


def server_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a test server runs with: isolated SLOWAVE_HOME plus `extra`."""
    env = {key: os.environ[key] for key in PASSTHROUGH_ENV if key in os.environ}
    return env | {"SLOWAVE_HOME": str(home)} | dict(extra or {})


def server_args(*extra: str) -> list[str]:
    """Arguments after the interpreter, relative to REPO_ROOT (the working directory)."""
    return ["manage.py", "mcp_serve", *extra]


@dataclass
class _Connected:
    session: ClientSession
    init: types.InitializeResult
    tools: list[types.Tool]
    listed_at: float
    pid: int
    cpu_seconds: float


@asynccontextmanager
async def _connect(
    params: StdioServerParameters, errlog: Any, client_info: types.Implementation, marker: str
) -> AsyncIterator[_Connected]:
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(
            read, write, read_timeout_seconds=DEFAULT_TIMEOUT, client_info=client_info
        ) as session:
            init = await session.initialize()
            listed = await session.list_tools()
            listed_at = time.monotonic()
            # Read right away: the embedding warm-up starts once tools/list is answered.
            pid = child_pid(marker, "SLOWAVE_E2E_MARKER")
            yield _Connected(session, init, listed.tools, listed_at, pid, _cpu_seconds(pid))


def server_fixture(
    *,
    env: Mapping[str, str] | None = None,
    args: tuple[str, ...] = (),
    scope: str = "module",
    databases: tuple[str, ...] = ("sqlite",),
) -> Any:
    """A pytest fixture (module-scoped by default) yielding one McpClient for the module.

    With several `databases` ("sqlite", "postgresql") every test using it runs once per
    database, each against its own server; PostgreSQL gets a fresh database per server.
    """

    @pytest.fixture(scope=scope, params=databases)  # type: ignore[call-overload]
    def _server(request: pytest.FixtureRequest) -> Iterator[McpClient]:
        with ExitStack() as stack:
            extra = dict(env or {})
            if request.param == "postgresql":
                from tests.pg_support import fresh_postgres_database

                extra["DATABASE_URL"] = stack.enter_context(fresh_postgres_database())
            yield stack.enter_context(spawn_server(env=extra, args=args))

    return _server


def _cpu_seconds(pid: int) -> float:
    fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def mapped_files(pid: int) -> set[str]:
    """Every file the process has mapped (/proc/PID/maps): which native libraries it loaded,
    torch's libtorch_cpu.so and onnxruntime's among them."""
    lines = (Path("/proc") / str(pid) / "maps").read_text().splitlines()
    return {line.split(maxsplit=5)[5] for line in lines if len(line.split(maxsplit=5)) == 6}


def _is_alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a killed child stays a zombie until the transport reaps it


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no stderr captured)"

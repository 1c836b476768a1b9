"""The floor of `slowave bench load --floor`: an MCP server that does no work.

Lives here: an ASGI app with the same SDK, the same five tool names and input schemas, and the
same transport as `/mcp` (stateless streamable HTTP, JSON responses), whose every tool answers
a fixed minimal envelope without a database or a model; and running it in a subprocess. The
same agents drive it, so its cycles/s is what the client loop, the SDK and HTTP cost on this
machine at that moment, and Slowave's share of it holds when the machine is noisy.
Does not live here: the phases and the share (load), the agents (load_agent).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import django
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from slowave_site.bench.load_server import (
    REPO_ROOT,
    START_TIMEOUT_SECONDS,
    _healthy,
    _stop,
    free_port,
)

# Just enough for the agent's cycle to go on: ids to feed back on, nothing shown, committed.
_DATA: dict[str, dict[str, Any]] = {
    "slowave_activate": {"session_id": "ses_floor", "retrieval_id": "ret_floor", "memories": []},
    "slowave_recall": {"retrieval_id": "ret_floor", "memories": []},
    "slowave_commit": {"committed": True},
}


def _data(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == "slowave_remember":
        results = [
            {"ok": True, "index": i, "data": {"memory_id": "mem_floor", "disposition": "created"}}
            for i, _ in enumerate(arguments.get("memories") or [])
        ]
        return {"results": results}
    if name == "slowave_feedback":
        items = arguments.get("items") or []
        return {
            "results": [
                {"ok": True, "index": i, "data": {"rejected": []}} for i in range(len(items))
            ]
        }
    return _DATA.get(name, {})


_TOOLS: list[types.Tool] = []


def _load_tools() -> None:
    """Slowave's tool list, read once per server process before it serves."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "slowave_site.settings")
    # The verb registry holds the services themselves, whose models need Django's app registry.
    django.setup()
    from mcp_bridge.tools import TOOLS

    _TOOLS[:] = [
        types.Tool(name=t.name, description=t.description, input_schema=t.input_schema())
        for t in TOOLS.values()
    ]


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOLS)


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    envelope = {"ok": True, "data": _data(params.name, params.arguments or {})}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(envelope))],
        structured_content=envelope,
        is_error=False,
    )


class FloorApp:
    """`/mcp` as above and `/api/health`; the SDK's manager runs inside the ASGI lifespan."""

    def __init__(self) -> None:
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[None]:
        _load_tools()
        server: Server[Any] = Server(
            "slowave-floor", on_list_tools=_list_tools, on_call_tool=_call_tool
        )
        manager = StreamableHTTPSessionManager(
            app=server,
            stateless=True,
            json_response=True,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()
            async with self._lifespan():
                await send({"type": "lifespan.startup.complete"})
                await receive()
            await send({"type": "lifespan.shutdown.complete"})
        elif scope["path"] == "/mcp" and self._manager is not None:
            await self._manager.handle_request(scope, receive, send)
        else:
            ok = scope["path"] == "/api/health"
            body = b'{"ok":true}' if ok else b'{"ok":false}'
            headers = [(b"content-type", b"application/json")]
            await send(
                {"type": "http.response.start", "status": 200 if ok else 404, "headers": headers}
            )
            await send({"type": "http.response.body", "body": body})


app = FloorApp()


@contextmanager
def floor_server(*, workers: int = 1) -> Iterator[str]:
    """The floor under uvicorn on 127.0.0.1:<free port>, with `workers` processes like `up`'s."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    code = (
        "from slowave_site.server_process import serve; "
        "serve('slowave_site.bench.load_floor:app', "
        f"host='127.0.0.1', port={port}, workers={workers})"
    )
    args = [sys.executable, "-c", code]
    log = tempfile.TemporaryFile()  # a file, not a pipe: nobody reads it while it runs
    process = subprocess.Popen(
        args, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not _healthy(base_url):
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise RuntimeError("the floor server did not start:\n" + log.read().decode())
            time.sleep(0.1)
        yield base_url
    finally:
        _stop(process)  # type: ignore[arg-type]
        log.close()

"""MCP over streamable HTTP at `/mcp` inside the ASGI app (spec §6.1): stateless, JSON responses.

Lives here: the SDK session manager around the same low-level server as stdio (same five
tools, same envelope), in front of it the Host/Origin/Content-Type rule REST also applies
(memory.http.host_policy) and REST token auth, and the ASGI lifespan that starts and
stops the manager. Does not live here: routing between `/mcp` and Django (slowave_site/asgi.py),
the auth decision itself (memory.services.tokens).

Stateless mode keeps no per-client session in memory: any worker can answer any request and a
restart loses nothing. The price is that MCP `clientInfo` is not known on tool calls (each
request is its own connection), so sessions opened here record no client name, and the
client identity is the server's SLOWAVE_CLIENT_IDENTITY, as over stdio.

Tool calls and token checks run in the pool of SLOWAVE_HTTP_WORKERS threads that this
lifespan starts (memory.http.workers) and every REST route but health shares, so one
agent's slow recall does not hold up the others and a burst cannot open unbounded threads;
stdio keeps its single thread.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from django.db import close_old_connections
from django.utils import timezone
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from mcp_bridge.server import build_server, run_in_database_thread
from memory.errors import SlowaveError
from memory.http.host_policy import request_refusal
from memory.http.status import status_for
from memory.http.workers import http_workers
from memory.services.tokens import Caller, bearer_of, caller_authenticate

Scope = dict[str, Any]


def _security() -> TransportSecuritySettings:
    # Host and Origin are checked before the SDK sees the request, by the rule REST shares
    # (memory.http.host_policy over settings.ALLOWED_HOSTS, whose patterns the SDK's list
    # cannot express); a second, narrower list here could only disagree with it.
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def _refusal(scope: Scope, headers: dict[str, str]) -> SlowaveError | None:
    server = scope.get("server")
    return request_refusal(
        method=scope["method"],
        host=headers.get("host") or (server[0] if server else ""),
        origin=headers.get("origin"),
        content_type=headers.get("content-type"),
        content_length=headers.get("content-length"),
        chunked="transfer-encoding" in headers,
    )


def _authenticate(token: str | None, remote_addr: str | None) -> Caller:
    close_old_connections()  # outside Django's request cycle: do its connection hygiene
    try:
        return caller_authenticate(token=token, remote_addr=remote_addr, now=timezone.now())
    finally:
        close_old_connections()


async def _send_json(
    send: Any, status: int, body: dict[str, Any], extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class McpHttpApp:
    """ASGI app for `/mcp`; `lifespan()` must be running (uvicorn's lifespan does that)."""

    def __init__(self) -> None:
        self._manager: StreamableHTTPSessionManager | None = None
        self._executor: ThreadPoolExecutor | None = None

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        # A manager runs once only, so each lifespan gets its own (tests start several).
        # The reaper stays with `slowave up`'s embedded worker: one per deployment.
        with http_workers() as executor:
            manager = StreamableHTTPSessionManager(
                app=build_server(background_worker=False, executor=executor),
                stateless=True,
                json_response=True,
                security_settings=_security(),
            )
            async with manager.run():
                self._manager, self._executor = manager, executor
                try:
                    yield
                finally:
                    self._manager = self._executor = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        manager, executor = self._manager, self._executor
        if manager is None or executor is None:
            error = {
                "code": "internal_error",
                "retryable": True,
                "message": "MCP over HTTP is not started (run under uvicorn with lifespan on)",
            }
            await _send_json(send, 503, {"ok": False, "error": error})
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refused = _refusal(scope, headers)
        if refused is not None:
            await _send_json(
                send, status_for(refused.code), {"ok": False, "error": refused.as_error()}
            )
            return
        client = scope.get("client")
        token = bearer_of(headers.get("authorization"))
        try:
            if token is None:
                # No token to look up: the loopback rule reads settings only, so the call
                # needs no hop to a database thread (five per agent cycle).
                caller_authenticate(
                    token=None, remote_addr=client[0] if client else None, now=timezone.now()
                )
            else:
                await run_in_database_thread(
                    executor, _authenticate, token, client[0] if client else None
                )
        except SlowaveError as exc:
            await _send_json(
                send,
                401,
                {"ok": False, "error": exc.as_error()},
                [(b"www-authenticate", b"Bearer")],
            )
            return
        await manager.handle_request(scope, receive, send)

    async def serve_lifespan(self, receive: Any, send: Any) -> None:
        """The ASGI lifespan protocol: start the manager on startup, stop it on shutdown."""
        async with AsyncExitStack() as stack:
            await receive()  # lifespan.startup
            try:
                await stack.enter_async_context(self.lifespan())
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})

"""The ASGI entry point: `/mcp` goes to the MCP SDK's streamable HTTP handler, all else to Django.

Only mcp_bridge imports the SDK; this module just routes and forwards the lifespan so the
SDK's session manager starts and stops with the server (uvicorn: lifespan on/auto).
"""

from __future__ import annotations

import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "slowave_site.settings")
django_app = get_asgi_application()  # sets Django up before mcp_bridge imports models

from mcp_bridge.http import McpHttpApp  # noqa: E402
from slowave_site.metrics import install_metrics  # noqa: E402
from slowave_site.server_process import server_process  # noqa: E402

mcp_app = McpHttpApp()
# Every server process records what it answers; `/metrics` sums them (slowave_site.metrics).
install_metrics()
# Which server process answered, on /api/health only: `up --workers N` runs several.
_PID_HEADER = (b"x-slowave-pid", str(os.getpid()).encode())


def _with_pid(send: Any) -> Any:
    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), _PID_HEADER]}
        await send(message)

    return wrapped


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        with server_process():
            await mcp_app.serve_lifespan(receive, send)
    elif scope["type"] == "http" and (scope["path"] == "/mcp" or scope["path"].startswith("/mcp/")):
        await mcp_app(scope, receive, send)
    elif scope["type"] == "http" and scope["path"] == "/api/health":
        await django_app(scope, receive, _with_pid(send))
    else:
        await django_app(scope, receive, send)

"""MCP client configuration for `slowave setup CLIENT` (Claude Code, Cursor, any stdio client)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

from django.conf import settings

from memory.errors import InvalidInput

CLIENTS = {"claude-code": ".mcp.json", "cursor": ".cursor/mcp.json", "generic": None}


def _launcher() -> tuple[str, list[str]]:
    """The console script when installed, else this interpreter with manage.py."""
    script = shutil.which("slowave")
    if script:
        return script, ["mcp-serve"]
    manage = Path(settings.BASE_DIR) / "manage.py"
    return sys.executable, [str(manage), "mcp_serve"]


def client_config(*, client: str, identity: str | None = None) -> dict[str, Any]:
    """The `mcpServers` entry an agent needs to start Slowave over stdio."""
    if client not in CLIENTS:
        raise InvalidInput.for_field(
            "client", f"unknown client {client!r}; choose one of " + ", ".join(CLIENTS)
        )
    command, args = _launcher()
    env = {
        "SLOWAVE_CLIENT_IDENTITY": identity or socket.gethostname(),
        "SLOWAVE_DB_PATH": str(settings.SLOWAVE_DB_PATH),
        # The export `slowave setup` makes: the server finds it whatever its SLOWAVE_HOME.
        "SLOWAVE_MODEL_DIR": str(settings.SLOWAVE_MODEL_DIR),
    }
    server = {"command": command, "args": args, "env": env}
    if client == "claude-code":
        server = {"type": "stdio", **server}
    return {"mcpServers": {"slowave": server}}


def client_config_write(*, client: str, directory: Path, config: dict[str, Any]) -> Path:
    """Merge the entry into the client's project file, keeping every other server."""
    relative = CLIENTS.get(client)
    if relative is None:
        raise InvalidInput.for_field(
            "client",
            "the generic client has no file; copy the printed configuration into your client",
        )
    target = Path(directory) / relative
    existing: dict[str, Any] = {}
    if target.exists():
        try:
            existing = json.loads(target.read_text() or "{}")
        except json.JSONDecodeError as exc:
            raise InvalidInput.for_field(
                "path", f"{target} is not valid JSON ({exc}); fix or move it first"
            ) from None
    servers = {**existing.get("mcpServers", {}), **config["mcpServers"]}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".tmp")
    tmp.write_text(json.dumps({**existing, "mcpServers": servers}, indent=2) + "\n")
    os.replace(tmp, target)
    return target

"""`slowave setup CLIENT [--write]`: the MCP configuration for Claude Code, Cursor or any client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory.management.commands._common import SlowaveCommand
from memory.services.clients import CLIENTS, client_config, client_config_write


class Command(SlowaveCommand):
    help = "Print (or --write) the MCP server configuration for claude-code, cursor or generic."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("client", choices=sorted(CLIENTS))
        parser.add_argument(
            "--write",
            action="store_true",
            help="merge into the client's project file (.mcp.json, .cursor/mcp.json)",
        )
        parser.add_argument(
            "--dir", default=".", help="project directory for --write (default: here)"
        )
        parser.add_argument("--identity", help="SLOWAVE_CLIENT_IDENTITY (default: host name)")

    def handle(self, *args: Any, **options: Any) -> None:
        client = options["client"]
        config = client_config(client=client, identity=options["identity"])
        if not options["write"]:
            self.stdout.write(json.dumps(config, indent=2))
            return
        target = client_config_write(client=client, directory=Path(options["dir"]), config=config)
        if self.as_json:
            self.emit({"ok": True, "data": {"written": str(target), "config": config}})
        else:
            self.stdout.write(
                f"Wrote the slowave server into {target}; restart {client} to load it."
            )

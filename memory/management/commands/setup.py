"""`slowave setup CLIENT [--write]`: the MCP configuration for Claude Code, Cursor or any client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings

from memory.errors import SlowaveError
from memory.management.commands._common import SlowaveCommand
from memory.services.clients import CLIENTS, client_config, client_config_write
from memory.services.embedder_export import embedder_export


class Command(SlowaveCommand):
    help = (
        "Print (or --write) the MCP server configuration for claude-code, cursor or generic, "
        "and make the ONNX export of the embedding model if it is missing (once)."
    )
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
            self._export()
            return
        target = client_config_write(client=client, directory=Path(options["dir"]), config=config)
        export = self._export()
        if self.as_json:
            data = {"written": str(target), "config": config, "onnx_export": export}
            self.emit({"ok": True, "data": data})
        else:
            self.stdout.write(
                f"Wrote the slowave server into {target}; restart {client} to load it."
            )

    def _export(self) -> str:
        """Make the ONNX export the server will serve from, now rather than at its first start;
        a failure leaves torch to serve and is said on stderr, not fatal."""
        if settings.SLOWAVE_EMBEDDER not in ("onnx", "onnx-int8"):
            return "not used"
        try:
            status, _ = embedder_export(announce=self.stderr.write)
        except SlowaveError as exc:
            self.stderr.write(
                f"warning: the ONNX export failed ({exc.message}); the server will embed with "
                "torch until `slowave embedder export` succeeds"
            )
            return "failed"
        return str(status.state)

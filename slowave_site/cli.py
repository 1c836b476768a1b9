"""The `slowave` console script: a thin front for the management commands (spec §11)."""

from __future__ import annotations

import os
import sys

ALIASES = {"mcp-serve": "mcp_serve"}


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "slowave_site.settings")
    if not args or args[0] in {"-h", "--help"}:
        print("usage: slowave {up,mcp-serve,...} [options]\n"
              "  up         migrate, then serve the admin on SLOWAVE_HOST:SLOWAVE_PORT\n"
              "  mcp-serve  the MCP server over stdio (what agents start)")
        raise SystemExit(0 if args else 2)
    command = ALIASES.get(args[0], args[0])
    from django.core.management import execute_from_command_line

    execute_from_command_line(["slowave", command, *args[1:]])

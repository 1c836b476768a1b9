"""`slowave setup CLIENT [--write]`: the MCP configuration for Claude Code, Cursor or any client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from memory.errors import SlowaveError
from memory.management.commands._common import SlowaveCommand
from memory.services.clients import CLIENTS, client_config, client_config_write
from memory.services.embedder_export import embedder_export
from memory.services.hook_config import HOOK_CLIENTS, hooks_config, hooks_target, hooks_write
from memory.services.repo_scope import repo_scope

SCOPE_HINT = (
    "Scope for {dir}: {scope} (`slowave scope` prints it; an agent without hooks should pass "
    "this as `scope` to slowave_activate, the same from every worktree of the repository)"
)


class Command(SlowaveCommand):
    help = (
        "Print (or --write) the MCP server configuration for claude-code, cursor or generic, "
        "and make the ONNX export of the embedding model if it is missing (once)."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("client", choices=sorted({*CLIENTS, *HOOK_CLIENTS}))
        parser.add_argument(
            "--write",
            action="store_true",
            help="merge into the client's project file (.mcp.json, .cursor/mcp.json)",
        )
        parser.add_argument(
            "--dir", default=".", help="project directory for --write (default: here)"
        )
        parser.add_argument("--identity", help="SLOWAVE_CLIENT_IDENTITY (default: host name)")
        parser.add_argument(
            "--hooks",
            action="store_true",
            help="claude-code: merge Slowave's hooks (SessionStart, UserPromptSubmit, "
            "Stop, SessionEnd, PreCompact) into ~/.claude/settings.json; codex: SessionStart, "
            "UserPromptSubmit and Stop into ~/.codex/hooks.json; every other hook kept, and run "
            "again, it adds nothing",
        )
        parser.add_argument(
            "--project",
            action="store_true",
            help="with --hooks: write the project's .claude/settings.json or .codex/hooks.json "
            "(under --dir) instead",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        client = options["client"]
        if options["hooks"]:
            return self._hooks(options)
        if options["project"]:
            raise CommandError("--project applies to --hooks only", returncode=2)
        if client not in CLIENTS:
            raise CommandError(f"{client} is set up with --hooks only", returncode=2)
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
            directory = Path(options["dir"]).resolve()
            self.stdout.write(SCOPE_HINT.format(dir=directory, scope=repo_scope(directory)))

    def _hooks(self, options: dict[str, Any]) -> None:
        client = options["client"]
        if client not in HOOK_CLIENTS:
            raise CommandError(f"--hooks applies to {' and '.join(HOOK_CLIENTS)}", returncode=2)
        directory = Path(options["dir"]).resolve()
        target = hooks_target(project=directory if options["project"] else None, client=client)
        config = hooks_config(client)
        added = hooks_write(target=target, config=config)
        scope = repo_scope(directory)
        if self.as_json:
            data = {"written": str(target), "added": added, "hooks": config, "scope": scope}
            self.emit({"ok": True, "data": data})
            return
        if not added:
            self.stdout.write(f"{target} already runs Slowave's hooks; nothing written.")
        else:
            self.stdout.write(f"Merged into {target} (other hooks kept):")
            for event, commands in added.items():
                for command in commands:
                    self.stdout.write(f"  {event}: {command}")
            name = {"claude-code": "Claude Code", "codex": "Codex"}[client]
            self.stdout.write(f"Restart {name} to load them; remove these entries to stop.")
        self.stdout.write(SCOPE_HINT.format(dir=directory, scope=scope))

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

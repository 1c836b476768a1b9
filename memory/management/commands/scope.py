"""`slowave scope [PATH]`: the scope Slowave files a directory's memory under."""

from __future__ import annotations

from typing import Any

from memory.management.commands._common import SlowaveCommand
from memory.services.repo_scope import repo_scope


class Command(SlowaveCommand):
    help = (
        "Print the scope of PATH (default: here): project:<host/owner/repo> from the git "
        "repository's origin URL, else project:<main worktree path>, else project:<directory "
        "name>. Every worktree and clone of one repository gives the same scope."
    )
    requires_system_checks: list[str] = []
    holds_store = False

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", nargs="?", default=".")

    def handle(self, *args: Any, **options: Any) -> None:
        scope = repo_scope(options["path"])
        if self.as_json:
            self.emit({"ok": True, "data": {"path": options["path"], "scope": scope}})
        else:
            self.stdout.write(scope)

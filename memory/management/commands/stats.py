"""`slowave stats [--scope kind:id]`: counts per entity, status, stage and scope."""

from __future__ import annotations

from typing import Any

from memory.management.commands._common import SlowaveCommand
from memory.schemas import RuleViolation, check_scope
from memory.selectors import scope_stats


class Command(SlowaveCommand):
    help = "Counts of memories, sessions, retrievals and feedback, overall or for one scope."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--scope", help="only this scope (kind:id)")

    def handle(self, *args: Any, **options: Any) -> None:
        scope = options["scope"]
        if scope is not None:
            try:
                scope = check_scope(scope)
            except RuleViolation as exc:
                self.parse_error(exc.message)
        stats = scope_stats(scope=scope)
        if self.as_json:
            self.emit({"ok": True, "data": stats})
            return
        from rich.table import Table

        table = Table(title=f"Slowave — {scope or 'all scopes'}", show_header=False)
        for key, value in stats.items():
            if key == "scope":
                continue
            if isinstance(value, dict):
                value = ", ".join(f"{k}: {v}" for k, v in value.items()) or "—"
            table.add_row(key.replace("_", " "), str(value))
        self.console().print(table)

    def parse_error(self, message: str) -> None:
        from django.core.management.base import CommandError

        raise CommandError(f"--scope: {message}", returncode=2)

"""`slowave doctor`: check the installation and the database; exit 1 when anything fails."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from memory.management.commands._common import SlowaveCommand
from memory.services.doctor import doctor_run

MARKS = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}


class Command(SlowaveCommand):
    help = (
        "Check Python, dependencies, SQLite + sqlite-vec, FTS5, WAL, migrations, paths, the "
        "broker, which embedder serves, the ONNX export and the offline model."
    )
    requires_system_checks: list[str] = []  # doctor must run even when checks would fail
    requires_migrations_checks = False

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--skip-model",
            action="store_true",
            help="do not load the embedding model (faster; the export is still checked)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        checks = doctor_run(include_model=not options["skip_model"])
        failed = [c.name for c in checks if c.status == "fail"]
        if self.as_json:
            self.emit({"ok": not failed, "data": {"checks": [c.as_dict() for c in checks]}})
        else:
            console = self.console()
            for check in checks:
                console.print(f"{MARKS[check.status]:>18}  [bold]{check.name}[/]: {check.detail}")
        if failed:
            raise CommandError(f"{len(failed)} check(s) failed: {', '.join(failed)}")

"""`slowave export --scope kind:id [--scope …] | --all [--out FILE]`: JSONL, stable order."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from django.utils import timezone

from memory.management.commands._common import SlowaveCommand
from memory.services.export import export_scopes, scopes_export


class Command(SlowaveCommand):
    help = "Export scopes (memories with evidence, procedures, retrievals, feedback, forget log)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--scope", action="append", default=[], help="a scope (repeatable)")
        parser.add_argument("--all", action="store_true", help="every scope")
        parser.add_argument("--out", help="file to write (default: stdout)")

    def handle(self, *args: Any, **options: Any) -> None:
        scopes = export_scopes(scopes=options["scope"], everything=options["all"])
        lines = scopes_export(scopes=scopes, now=timezone.now())
        if not options["out"]:
            for line in lines:
                sys.stdout.write(line + "\n")
            return
        target = Path(options["out"])
        tmp = target.with_name(f".{target.name}.tmp")
        count = 0
        with self.progress("Exporting") as advance, tmp.open("w", encoding="utf-8") as out:
            for line in lines:
                out.write(line + "\n")
                count += 1
                advance(1)
        os.replace(tmp, target)  # a reader never sees half an export
        if self.as_json:
            self.emit(
                {"ok": True, "data": {"out": str(target), "records": count, "scopes": scopes}}
            )
        else:
            self.stderr.write(f"Exported {count} records from {len(scopes)} scope(s) to {target}")

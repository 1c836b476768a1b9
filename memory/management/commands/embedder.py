"""`slowave embedder export|status`: the ONNX export of the embedding model."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from memory.embedders.export_files import ExportStatus
from memory.management.commands._common import SlowaveCommand
from memory.services.embedder_export import embedder_export, embedder_export_status


class Command(SlowaveCommand):
    help = (
        "export: make the ONNX export of the embedding model that serving uses (once; it "
        "imports torch), unless a fresh one exists. status: whether the export is fresh and how "
        "closely it reproduces torch; exit 1 when it is missing or stale."
    )
    requires_system_checks: list[str] = []
    holds_store = False  # the export is no part of the store

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("action", choices=["export", "status"])
        parser.add_argument("--force", action="store_true", help="export even when fresh")

    def handle(self, *args: Any, **options: Any) -> None:
        made = False
        if options["action"] == "export":
            status, made = embedder_export(force=options["force"], announce=self._announce)
        else:
            status = embedder_export_status(verify=True)
        self._report(status, made=made)
        if not status.fresh:
            raise CommandError(f"the ONNX export is {status.state}: {status.reason}")

    def _announce(self, line: str) -> None:
        self.stderr.write(line)

    def _report(self, status: ExportStatus, *, made: bool) -> None:
        check = (status.manifest or {}).get("verification", {})
        if self.as_json:
            data = {
                "state": status.state,
                "reason": status.reason,
                "directory": str(status.directory),
                "exported": made,
                "verification": check,
            }
            self.emit({"ok": status.fresh, "data": data})
            return
        if not status.fresh:
            return
        verb = "Exported" if made else "Fresh export"
        self.stdout.write(
            f"{verb} in {status.directory}: max |diff| vs {check.get('reference', 'torch fp32')} "
            f"{check.get('fp32_max_abs_diff', 0):.1e}, int8 {check.get('int8_max_abs_diff', 0):.1e}"
        )

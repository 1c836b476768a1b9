"""`slowave import FILE --scope kind:id [--dry-run]`, `--format export [--remap]`, or
`--format claude-code|codex|chatgpt PATH [--scope kind:id] [--dry-run]` for those tools' history."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError
from django.utils import timezone

from memory.management.commands._common import SlowaveCommand
from memory.replies.staff import ImportOut
from memory.services.export_load import export_import
from memory.services.import_formats import FORMATS, SourceFile, history_read, history_write
from memory.services.import_formats.sources import history_sources
from memory.services.imports import import_check_size, import_limit, import_lines
from memory.services.transcripts import transcripts_import


class Command(SlowaveCommand):
    help = (
        "Import a JSONL transcript ({session_key, role, content, occurred_at?, metadata?} per "
        "line) into --scope, or a Slowave export with --format export. All or nothing: an "
        "export whose ids are already in use is refused with the colliding ids listed, unless "
        "--remap renumbers them. --format claude-code reads Claude Code session transcripts "
        "(a .jsonl file, a project directory, or ~/.claude/projects), --format codex Codex "
        "rollouts (a rollout-*.jsonl file, or a directory such as ~/.codex/sessions), "
        "--format chatgpt a ChatGPT export's conversations.json: their user and assistant "
        "text becomes ended sessions; re-importing them changes nothing."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "file",
            help="UTF-8 file ('-' for stdin), at most SLOWAVE_IMPORT_MAX_BYTES; a directory "
            "for --format claude-code, codex or chatgpt",
        )
        parser.add_argument(
            "--scope",
            help="target scope (kind:id); required for transcripts; for claude-code and "
            "codex the default is the recorded cwd's repository scope (see `slowave scope`; "
            "project:codex for a rollout that records none), for chatgpt project:chatgpt",
        )
        parser.add_argument(
            "--format", choices=["transcript", "export", *FORMATS], default="transcript"
        )
        parser.add_argument("--dry-run", action="store_true", help="validate and report only")
        parser.add_argument(
            "--remap",
            action="store_true",
            help=(
                "export only: give memories, events, episodes, prototypes, supports and other "
                "integer-keyed rows whose id is taken fresh ids, rewriting every reference to "
                "them (foreign keys, sch_N/evt_N/ep_N/pro_N target ids and JSON refs). String "
                "ids (sess_, cont_, proc_, ctx_/rec_, cur_, fbe_) are never renumbered: one in "
                "use means those rows are already here, and the import is refused"
            ),
        )

    def _lines(self, name: str) -> list[str]:
        if name == "-":
            import sys

            # One byte past the limit is enough to refuse, without reading all of a huge pipe.
            return import_lines(data=sys.stdin.buffer.read(import_limit() + 1), source="stdin")
        path = Path(name)
        if not path.is_file():
            raise CommandError(f"no such file: {name}")
        try:
            import_check_size(size=path.stat().st_size, source=name)
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {name}: {exc.strerror}") from None
        return import_lines(data=data, source=name)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["format"] in FORMATS:
            return self._history(options)
        lines = self._lines(options["file"])
        now = timezone.now()
        if options["format"] == "export":
            if options["scope"] or options["dry_run"]:
                raise CommandError("--scope and --dry-run apply to transcripts only", returncode=2)
            with self.progress("Importing export") as advance:
                report: ImportOut = export_import(
                    lines=lines, now=now, progress=advance, remap=options["remap"]
                )
        else:
            if options["remap"]:
                raise CommandError("--remap applies to --format export only", returncode=2)
            if not options["scope"]:
                raise CommandError("--scope is required for a transcript import", returncode=2)
            with self.progress("Importing sessions") as advance:
                report = transcripts_import(
                    lines=lines,
                    scope=options["scope"],
                    now=now,
                    dry_run=options["dry_run"],
                    progress=advance,
                )
        if self.as_json:
            self.emit({"ok": True, "data": report})
        else:
            self._print(report)

    def _history(self, options: dict[str, Any]) -> None:
        if options["remap"]:
            raise CommandError("--remap applies to --format export only", returncode=2)
        name = options["file"]
        if name == "-":
            plan = history_read(
                format=options["format"],
                files=[SourceFile(name="stdin", lines=self._lines(name))],
                scope=options["scope"],
            )
        else:
            sources = history_sources(format=options["format"], path=Path(name))
            plan = history_read(
                format=options["format"],
                files=sources,
                scope=options["scope"],
                skipped=sources.skipped,
            )
        with self.progress("Importing sessions", total=plan.sessions) as advance:
            report = history_write(
                plan=plan, now=timezone.now(), dry_run=options["dry_run"], progress=advance
            )
        if self.as_json:
            self.emit({"ok": True, "data": report})
            return
        self._print_history(report)

    def _print_history(self, report: Mapping[str, Any]) -> None:
        if report["dry_run"]:
            head = f"Dry run: would import {report['would_import']} new session(s)"
        else:
            head = f"Imported {report['sessions_imported']} new session(s)"
        before = report["sessions_skipped"]
        again = f", {before} imported before and left as they were" if before else ""
        self.stdout.write(
            f"{head}{again}; read {report['files']} file(s): {report['turns_kept']} text turns, "
            f"{report['turns_dropped']} dropped (tool calls and results, thinking, commands)"
        )
        for skipped in report["files_skipped"]:
            self.stdout.write(f"  skipped {skipped['file']}: {skipped['reason']}")
        for scope in report["scopes"]:
            new = len(scope.get("would_create", scope["sessions_created"]))
            self.stdout.write(
                f"  {scope['scope']}: {new} new, {len(scope['sessions_skipped'])} already imported"
            )

    def _print(self, report: Mapping[str, Any]) -> None:
        if "imported" in report:
            self.stdout.write(
                "Imported: " + ", ".join(f"{k} {v}" for k, v in report["imported"].items())
            )
            if report.get("remapped"):
                self.stdout.write(
                    "Renumbered: " + ", ".join(f"{k} {v}" for k, v in report["remapped"].items())
                )
            for old, new in report.get("memory_ids", {}).items():
                self.stdout.write(f"{old} -> {new}")
            return
        if report["dry_run"]:
            self.stdout.write(
                f"Dry run: {report['lines']} valid lines; would create "
                f"{len(report['would_create'])} session(s)"
            )
        else:
            self.stdout.write(
                f"Created {len(report['sessions_created'])} session(s) with "
                f"{report['events']} events and {report['episodes']} episodes in "
                f"{report['scope']}"
            )
        for key in report["sessions_skipped"]:
            self.stdout.write(f"skipped (already imported): {key}")

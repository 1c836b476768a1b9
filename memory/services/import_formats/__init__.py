"""Other tools' history files as transcripts: `slowave import --format claude-code|codex|chatgpt`.

A reader (claude_code, codex, chatgpt) turns the foreign files into the transcript records of
memory.services.transcripts, grouped by scope, and refuses the whole import at the first
malformed record (`FILE:LINE: message`); nothing is written until every file has been read.
`history_write` then hands each scope's plan to `transcripts_write`, so session keys, the
skip of sessions imported before, episodes and consolidation are those of a transcript
import. Finding the files on disk lives in `sources`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

from django.db import transaction
from pydantic import ValidationError

from memory.errors import InvalidInput
from memory.replies.staff import HistoryImportOut, SkippedFileOut, TranscriptImportOut
from memory.schemas import CONTROL_RE, RuleViolation, check_scope, validation_error
from memory.secrets import SecretGuard, secrets_policy
from memory.services.imports import import_limit
from memory.services.transcripts import TranscriptLine, TranscriptPlan, transcripts_write

FORMATS = ("claude-code", "codex", "chatgpt")
HistoryFormat = Literal["claude-code", "codex", "chatgpt"]
# The metadata field that names a turn once per session, for the formats a hook captures
# (memory.services.hook_capture): Claude Code's own `uuid`; the key the codex reader derives.
TURN_FIELDS = {"claude-code": "uuid", "codex": "turn"}
CONTENT_MAX = 32_000  # TranscriptLine.content's bound
SCOPE_MAX = 200


@dataclass(frozen=True)
class SourceFile:
    """One file's lines; `name` is what errors call it, `project` the directory name a
    default scope falls back to (None for stdin or a request body)."""

    name: str
    lines: list[str]
    project: str | None = None


@dataclass
class HistoryPlan:
    """Validated records per scope, in the order the scopes were first met, and the tally."""

    format: str
    plans: dict[str, TranscriptPlan] = field(default_factory=dict)
    files: int = 0
    files_skipped: list[SkippedFileOut] = field(default_factory=list)
    turns_dropped: int = 0
    records_skipped: int = 0
    text_bytes: int = 0  # the kept turns' text held so far, bounded by `hold`

    @property
    def sessions(self) -> int:
        return sum(len(plan.groups) for plan in self.plans.values())

    @property
    def turns_kept(self) -> int:
        return sum(plan.lines for plan in self.plans.values())

    def hold(self, *, text: str, source: str) -> None:
        """Count a kept turn's text against the import's bound: the files are read one at a
        time, but the text they keep is held until it is written, in one transaction."""
        self.text_bytes += len(text.encode("utf-8", "surrogatepass"))
        limit = import_limit()
        if self.text_bytes > limit:
            raise InvalidInput(
                f"the conversation text read passes {limit} bytes at {source} "
                "(SLOWAVE_IMPORT_MAX_BYTES bounds a whole import as well as each file): import "
                "fewer files at once (one project directory, say), or raise the limit"
            )

    def add(
        self, scope: str, records: list[TranscriptLine], redacted: dict[str, dict[str, int]]
    ) -> None:
        """A turn's records, and what SLOWAVE_SECRETS=redact replaced in it (kept on its
        session, as a transcript import keeps it)."""
        plan = self.plans.setdefault(scope, TranscriptPlan())
        for record in records:
            plan.groups.setdefault(record.session_key, []).append(record)
            plan.lines += 1
        if records and redacted:
            plan.redacted.setdefault(records[0].session_key, {}).update(redacted)


def malformed(source: str, where: int | str, message: str) -> InvalidInput:
    """The one error a reader raises: the file, the line (or JSON path) and what is wrong."""
    text = f"{source}:{where}: {message}"
    return InvalidInput(text, field_errors=[{"path": f"{source}:{where}", "message": message}])


def checked_scope(scope: str) -> str:
    try:
        checked = check_scope(scope)
    except RuleViolation as exc:
        raise InvalidInput.for_field_message("scope", exc.message) from None
    SecretGuard().check_identifier(checked, "scope")
    return checked


def project_scope(name: str) -> str:
    """`project:<name>`, with control characters dropped and cut to a scope's length."""
    clean = CONTROL_RE.sub("", name).strip() or "imported"
    return checked_scope(f"project:{clean}"[:SCOPE_MAX])


def _pieces(text: str) -> list[str]:
    """`text` in pieces of at most CONTENT_MAX characters, cut at a line or word break where
    one falls in the second half of a piece: a long answer stays whole, over several turns."""
    pieces: list[str] = []
    while len(text) > CONTENT_MAX:
        window = text[:CONTENT_MAX]
        cut = max(window.rfind("\n"), window.rfind(" "))
        cut = cut + 1 if cut >= CONTENT_MAX // 2 else CONTENT_MAX
        pieces.append(text[:cut])
        text = text[cut:]
    pieces.append(text)
    return [piece for piece in pieces if piece.strip()]


def records(
    *,
    source: str,
    where: int | str,
    key: str,
    role: str,
    text: str,
    occurred_at: str | None,
    metadata: dict[str, Any],
) -> tuple[list[TranscriptLine], dict[str, dict[str, int]]]:
    """The transcript records of one kept turn, validated as a transcript line is, and its
    redactions. The turn's text goes through the secret guard first, whole: under `reject` a
    credential refuses the import, naming `FILE:LINE` and the kind, never the value."""
    guard = SecretGuard(secrets_policy())
    guard.check_identifier(key, f"{source}:{where}.session")
    text = guard.clean(text, f"{source}:{where}")
    try:
        return [
            TranscriptLine.model_validate(
                {
                    "session_key": key,
                    "role": role,
                    "content": piece,
                    "occurred_at": occurred_at,
                    "metadata": metadata,
                }
            )
            for piece in _pieces(text)
        ], guard.redacted
    except ValidationError as exc:
        raise malformed(source, where, validation_error(exc).message) from None


def history_write(
    *,
    plan: HistoryPlan,
    now: datetime,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> HistoryImportOut:
    """Write every scope's sessions in one transaction; the summary of what was read and done.

    `progress` advances once per session of the plan, written or skipped."""
    reports: list[TranscriptImportOut] = []
    with transaction.atomic():
        for scope, scope_plan in plan.plans.items():
            report = transcripts_write(
                plan=scope_plan, scope=scope, now=now, dry_run=dry_run, progress=progress
            )
            if progress is not None:
                unwritten = len(report["sessions_skipped"]) + len(report.get("would_create", []))
                if unwritten:
                    progress(unwritten)
            reports.append(report)
    summary: HistoryImportOut = {
        "format": cast(HistoryFormat, plan.format),
        "dry_run": dry_run,
        "files": plan.files,
        "files_skipped": plan.files_skipped,
        "sessions_imported": sum(len(r["sessions_created"]) for r in reports),
        "sessions_skipped": sum(len(r["sessions_skipped"]) for r in reports),
        "turns_kept": plan.turns_kept,
        "turns_dropped": plan.turns_dropped,
        "records_skipped": plan.records_skipped,
        "events": sum(r["events"] for r in reports),
        "episodes": sum(r["episodes"] for r in reports),
        "scopes": reports,
    }
    if dry_run:
        summary["would_import"] = sum(len(r["would_create"]) for r in reports)
    return summary


def history_read(
    *,
    format: str,
    files: Iterable[SourceFile],
    scope: str | None,
    skipped: list[SkippedFileOut] | None = None,
) -> HistoryPlan:
    """Read `files` of `format` into a plan; the first malformed record refuses them all.

    `skipped`: the list the files' source fills, while they are read, with those it leaves
    out (memory.services.import_formats.sources); the plan reports it."""
    from memory.services.import_formats.chatgpt import chatgpt_read
    from memory.services.import_formats.claude_code import claude_code_read
    from memory.services.import_formats.codex import codex_read

    readers = {"claude-code": claude_code_read, "codex": codex_read, "chatgpt": chatgpt_read}
    if format not in readers:
        raise InvalidInput.for_field("format", f"format must be one of {', '.join(FORMATS)}")
    target = checked_scope(scope) if scope is not None else None
    plan = readers[format](files=files, scope=target)
    plan.files_skipped = skipped if skipped is not None else []
    return plan

"""Transcript import (spec §9): JSONL conversation lines become ended sessions and episodes.

The whole file is validated before anything is written (`line N: path: message`, nothing
imported); then each new session_key becomes one session, in file order, formed into episodes
as a live session would be. Keys already imported into the scope are skipped and reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from django.db import transaction
from pydantic import Field, ValidationError, field_validator

from memory.errors import InvalidInput
from memory.ids import new_session_id
from memory.models import Event, Session
from memory.replies.staff import TranscriptImportOut
from memory.schemas import (
    JSON_MAX_DEPTH,
    JsonTooDeep,
    RuleViolation,
    Strict,
    check_scope,
    json_loads,
    json_problem,
    parse_timestamp,
    validation_error,
    without_nul,
)
from memory.secrets import SecretGuard, secrets_policy
from memory.services.episodes import episodes_form
from memory.services.scheduling import enqueue_consolidation

METADATA_MAX_BYTES = 4 * 1024
ROLE_KINDS = {
    "user": Event.Kind.USER_MESSAGE,
    "assistant": Event.Kind.ASSISTANT_MESSAGE,
    "system": Event.Kind.SYSTEM_MESSAGE,
    "tool": Event.Kind.TOOL_MESSAGE,
}


class TranscriptLine(Strict):
    session_key: str = Field(min_length=1, max_length=200)
    role: Literal["user", "assistant", "system", "tool"]
    content: str = Field(min_length=1, max_length=32_000)
    occurred_at: str | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("occurred_at")
    @classmethod
    def _time(cls, value: str | None) -> str | None:
        if value is not None:
            parse_timestamp(value, "occurred_at")
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        # Stored in a JSON column, which takes no NaN or Infinity.
        problem = json_problem(value, "metadata", max_depth=JSON_MAX_DEPTH)
        if problem is not None:
            raise RuleViolation("metadata", problem[1])
        if len(json.dumps(value, ensure_ascii=False).encode()) > METADATA_MAX_BYTES:
            raise RuleViolation("metadata", "metadata must serialise to at most 4 KiB")
        return value


@dataclass
class TranscriptPlan:
    """Validated lines grouped by session_key, in first-appearance order; `redacted` holds,
    per session_key, what SLOWAVE_SECRETS=redact replaced ("line N.content" → {kind: count})."""

    groups: dict[str, list[TranscriptLine]] = field(default_factory=dict)
    lines: int = 0
    redacted: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)


def transcript_parse(*, lines: Iterable[str]) -> TranscriptPlan:
    """Validate every line; the first bad one raises `line N: path: message`."""
    plan = TranscriptPlan()
    policy = secrets_policy()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = without_nul(json_loads(raw))
        except JsonTooDeep as exc:
            raise InvalidInput(
                f"line {number}: {exc.message}",
                field_errors=[{"path": f"line {number}", "message": exc.message}],
            ) from None
        except json.JSONDecodeError as exc:
            raise InvalidInput(
                f"line {number}: not valid JSON ({exc.msg})",
                field_errors=[{"path": f"line {number}", "message": exc.msg}],
            ) from None
        try:
            if not isinstance(data, dict):
                raise InvalidInput("each line must be a JSON object")
            line = TranscriptLine.model_validate(data)
        except ValidationError as exc:
            error = validation_error(exc)
            raise InvalidInput(
                f"line {number}: {error.message}",
                field_errors=[
                    {"path": f"line {number}.{e['path']}", "message": e["message"]}
                    for e in error.field_errors or []
                ],
            ) from None
        except InvalidInput as exc:
            raise InvalidInput(f"line {number}: {exc.message}") from None
        guard = SecretGuard(policy)
        line = guard.clean_value(line, f"line {number}")
        if guard.redacted:
            plan.redacted.setdefault(line.session_key, {}).update(guard.redacted)
        plan.groups.setdefault(line.session_key, []).append(line)
        plan.lines += 1
    return plan


def _session_for(
    scope: str, key: str, lines: list[TranscriptLine], now: datetime, redacted: dict[str, Any]
) -> Session:
    times = [parse_timestamp(t.occurred_at, "occurred_at") for t in lines if t.occurred_at]
    started = min(times) if times else now
    session = Session.objects.create(
        id=new_session_id(),
        scope=scope,
        scope_kind=scope.partition(":")[0],
        task=f"Imported transcript {key}",
        initial_goal="",
        status=Session.Status.ENDED,
        started_at=started,
        last_activity_at=now,
        ended_at=now,
        ended_by=Session.EndedBy.IMPORT,
        outcome=Session.Outcome.UNKNOWN,
        feedback_status=Session.FeedbackStatus.NOT_REQUIRED,
        verification={
            "status": "unverified",
            "summary": "Imported transcript",
            "evidence_refs": [],
        },
        import_key=key,
        client_name="slowave-import",
        redactions=redacted,
    )
    Event.objects.bulk_create(
        [
            Event(
                session=session,
                seq=seq,
                kind=ROLE_KINDS[line.role],
                role=line.role,
                content=line.content,
                metadata=line.metadata or {},
                recorded_at=now,
                occurred_at=parse_timestamp(line.occurred_at, "occurred_at")
                if line.occurred_at
                else None,
            )
            for seq, line in enumerate(lines, start=1)
        ]
    )
    return session


def transcripts_import(
    *,
    lines: Iterable[str],
    scope: str,
    now: datetime,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> TranscriptImportOut:
    """Import a JSONL transcript into `scope`; all or nothing, idempotent per session_key."""
    try:
        scope = check_scope(scope)
    except RuleViolation as exc:
        raise InvalidInput.for_field_message("scope", exc.message) from None
    SecretGuard().check_identifier(scope, "scope")
    plan = transcript_parse(lines=lines)
    return transcripts_write(plan=plan, scope=scope, now=now, dry_run=dry_run, progress=progress)


def transcripts_write(
    *,
    plan: TranscriptPlan,
    scope: str,
    now: datetime,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> TranscriptImportOut:
    """Write a validated plan into `scope` (checked by the caller); keys already there are
    skipped. The readers of other tools' history files (memory.services.import_formats)
    build their plans from the same records and write through here."""
    existing = set(
        Session.objects.filter(scope=scope, import_key__in=list(plan.groups)).values_list(
            "import_key", flat=True
        )
    )
    fresh = [key for key in plan.groups if key not in existing]
    report: TranscriptImportOut = {
        "scope": scope,
        "lines": plan.lines,
        "dry_run": dry_run,
        "sessions_created": [],
        "sessions_skipped": [k for k in plan.groups if k in existing],
        "events": sum(len(plan.groups[k]) for k in fresh),
        "episodes": 0,
    }
    if plan.redacted:
        report["redacted"] = plan.redacted
    if dry_run:
        report["would_create"] = fresh
        return report
    if not fresh:
        return report
    with transaction.atomic():
        for key in fresh:
            session = _session_for(scope, key, plan.groups[key], now, plan.redacted.get(key, {}))
            report["episodes"] += episodes_form(session_id=session.pk, now=now)
            report["sessions_created"].append({"session_key": key, "session_id": session.pk})
            if progress:
                progress(1)
        enqueue_consolidation(scope=scope)
    return report

"""A session captured as it goes: what the Claude Code Stop, SessionEnd and PreCompact hooks and
the Codex Stop hook do.

The file the hook hands over is told apart by its first line (a Codex rollout opens with its
`session_meta`; memory.services.import_formats.sources) and read by that format's import
(memory.services.import_formats: secrets screened, tool noise and meta lines dropped) into the
scope of the session's working directory (memory.services.repo_scope). Only the turns not stored
before are written: each capture of a session that grew becomes one more ended session, keyed
`<format>:<session id>` the first time and `<format>:<session id>#<n>` after, and a turn is
recognised by the key its format gives it (TURN_FIELDS: Claude Code's `uuid`; for Codex, whose
lines have none, the one its reader derives), so handing the same file over twice stores
nothing the second time. A later `slowave import` of the same history skips the session, as it
skips any session imported before. Each write queues consolidation.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from django.db import transaction
from django.db.models import Q

from memory.models import Event, Session
from memory.replies.staff import HistoryImportOut
from memory.services.import_formats import TURN_FIELDS, HistoryPlan, history_read, history_write
from memory.services.import_formats.sources import history_sources, transcript_format
from memory.services.repo_scope import repo_scope
from memory.services.transcripts import TranscriptLine, TranscriptPlan


def _stored_turns(scope: str, key: str, field: str) -> tuple[set[str], int]:
    """The turn keys (metadata `field`) already stored for session `key` in `scope`, and how
    many captures stored them."""
    sessions = Session.objects.filter(
        Q(import_key=key) | Q(import_key__startswith=f"{key}#"), scope=scope
    )
    turns = {
        value
        for value in Event.objects.filter(session__in=sessions).values_list(
            f"metadata__{field}", flat=True
        )
        if isinstance(value, str)
    }
    return turns, sessions.count()


def _unstored(scope: str, plan: TranscriptPlan, field: str) -> TranscriptPlan:
    """`plan` without the turns stored before, each session's rest under its next key."""
    fresh = TranscriptPlan()
    for key, lines in plan.groups.items():
        stored, captures = _stored_turns(scope, key, field)
        rest: list[TranscriptLine] = [
            line for line in lines if (line.metadata or {}).get(field) not in stored
        ]
        if not rest:
            continue
        target = key if captures == 0 else f"{key}#{captures + 1}"
        fresh.groups[target] = rest
        fresh.lines += len(rest)
        if key in plan.redacted:
            fresh.redacted[target] = plan.redacted[key]
    return fresh


def hook_capture(*, transcript_path: str, cwd: str, now: datetime) -> HistoryImportOut:
    """Store the turns of the transcript or rollout at `transcript_path` not stored before, in
    one transaction, into the scope of `cwd`'s repository."""
    scope = repo_scope(cwd)
    path = Path(transcript_path)
    format = transcript_format(path)
    files = history_sources(format=format, path=path)
    read = history_read(format=format, files=files, scope=scope)
    with transaction.atomic():
        plan = HistoryPlan(
            format=read.format,
            files=read.files,
            turns_dropped=read.turns_dropped,
            records_skipped=read.records_skipped,
        )
        for target, scope_plan in read.plans.items():
            plan.plans[target] = _unstored(target, scope_plan, TURN_FIELDS[format])
        return history_write(plan=plan, now=now)

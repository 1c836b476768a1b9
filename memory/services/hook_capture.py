"""A Claude Code session captured as it goes: what the Stop, SessionEnd and PreCompact hooks do.

The transcript is read by the Claude Code import (memory.services.import_formats: secrets
screened, tool noise and meta lines dropped) into the scope of the session's working
directory (memory.services.repo_scope). Only the turns not stored before are written: each
capture of a session that grew becomes one more ended session, keyed
`claude-code:<sessionId>` the first time and `claude-code:<sessionId>#<n>` after, and a turn
is recognised by the `uuid` Claude Code gave it, so handing the same transcript over twice
stores nothing the second time. A later `slowave import` of the same history skips the
session, as it skips any session imported before. Each write queues consolidation.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from django.db import transaction
from django.db.models import Q

from memory.models import Event, Session
from memory.replies.staff import HistoryImportOut
from memory.services.import_formats import HistoryPlan, history_read, history_write
from memory.services.import_formats.sources import history_sources
from memory.services.repo_scope import repo_scope
from memory.services.transcripts import TranscriptLine, TranscriptPlan


def _stored_uuids(scope: str, key: str) -> tuple[set[str], int]:
    """The turn uuids already stored for session `key` in `scope`, and how many captures."""
    sessions = Session.objects.filter(
        Q(import_key=key) | Q(import_key__startswith=f"{key}#"), scope=scope
    )
    uuids = {
        value
        for value in Event.objects.filter(session__in=sessions).values_list(
            "metadata__uuid", flat=True
        )
        if isinstance(value, str)
    }
    return uuids, sessions.count()


def _unstored(scope: str, plan: TranscriptPlan) -> TranscriptPlan:
    """`plan` without the turns stored before, each session's rest under its next key."""
    fresh = TranscriptPlan()
    for key, lines in plan.groups.items():
        stored, captures = _stored_uuids(scope, key)
        rest: list[TranscriptLine] = [
            line for line in lines if (line.metadata or {}).get("uuid") not in stored
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
    """Store the turns of the transcript at `transcript_path` not stored before, in one
    transaction, into the scope of `cwd`'s repository."""
    scope = repo_scope(cwd)
    files = history_sources(format="claude-code", path=Path(transcript_path))
    read = history_read(format="claude-code", files=files, scope=scope)
    with transaction.atomic():
        plan = HistoryPlan(
            format=read.format,
            files=read.files,
            turns_dropped=read.turns_dropped,
            records_skipped=read.records_skipped,
        )
        for target, scope_plan in read.plans.items():
            plan.plans[target] = _unstored(target, scope_plan)
        return history_write(plan=plan, now=now)

"""The idle reaper: a session past SLOWAVE_SESSION_IDLE_TIMEOUT is closed through the commit
path (spec §6.8), before a call that names it or by the periodic sweep."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from memory.models import Session
from memory.services.closing import session_close
from memory.services.sessions import session_checked


def session_reap_if_idle(*, session_id: str, now: datetime) -> None:
    """Close the session first if it has outlived the idle timeout.

    Runs before a call's own transaction so the closure stands even when the call is rejected.
    """
    cutoff = _idle_cutoff(now)
    if cutoff is None:
        return
    # A plain read first: the write transaction (and SQLite's write lock) only when idle.
    if Session.objects.filter(
        pk=session_id, status=Session.Status.OPEN, last_activity_at__lt=cutoff
    ).exists():
        session_end_idle(session_id=session_id, now=now)


def _idle_cutoff(now: datetime) -> datetime | None:
    timeout = settings.SLOWAVE_SESSION_IDLE_TIMEOUT
    return now - timedelta(seconds=timeout) if timeout > 0 else None


def session_for_call(*, session_id: str, scope: str | None, now: datetime) -> Session:
    """session_reap_if_idle and session_check in one read, before the call's transaction."""
    session = Session.objects.filter(pk=session_id).first()
    cutoff = _idle_cutoff(now)
    if (
        session is not None
        and cutoff is not None
        and session.status == Session.Status.OPEN
        and session.last_activity_at < cutoff
        and session_end_idle(session_id=session_id, now=now)
    ):
        session.status = Session.Status.ENDED
    return session_checked(session, session_id=session_id, scope=scope)


def session_end_idle(*, session_id: str, now: datetime) -> bool:
    """Claim one idle session and close it through the commit path (spec §6.8)."""
    timeout = settings.SLOWAVE_SESSION_IDLE_TIMEOUT
    cutoff = now - timedelta(seconds=timeout)
    with transaction.atomic():
        claimed = Session.objects.filter(
            pk=session_id, status=Session.Status.OPEN, last_activity_at__lt=cutoff
        ).update(status=Session.Status.ENDED, ended_at=now, ended_by=Session.EndedBy.REAPER)
        if claimed != 1:
            return False
        session = Session.objects.get(pk=session_id)
        session_close(
            session=session,
            outcome=Session.Outcome.UNKNOWN,
            outcome_summary="",
            final_goal="",
            verification={
                "status": "unverified",
                "summary": "Idle reaper closure",
                "evidence_refs": [],
            },
            ended_by=Session.EndedBy.REAPER,
            now=now,
        )
    return True


def session_reap_idle(*, now: datetime) -> list[str]:
    timeout = settings.SLOWAVE_SESSION_IDLE_TIMEOUT
    if timeout <= 0:
        return []
    cutoff = now - timedelta(seconds=timeout)
    candidates = Session.objects.filter(
        status=Session.Status.OPEN, last_activity_at__lt=cutoff
    ).values_list("pk", flat=True)
    return [sid for sid in list(candidates) if session_end_idle(session_id=sid, now=now)]

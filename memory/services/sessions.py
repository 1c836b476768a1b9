"""Session lifecycle: checks for later calls, event appends, continuity, and the idle reaper."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from memory.errors import InvalidInput
from memory.models import Continuity, Event, Session
from memory.schemas import ActivateIn


@dataclass(frozen=True)
class ClientInfo:
    name: str = ""
    version: str = ""
    identity: str = ""


def session_check(*, session_id: str, scope: str | None, allow_ended: bool = False) -> Session:
    """The open session for a call, locked for this transaction; rule errors of spec §14."""
    session = Session.objects.filter(pk=session_id).first()
    return _checked(session, session_id=session_id, scope=scope, allow_ended=allow_ended)


def _checked(
    session: Session | None, *, session_id: str, scope: str | None, allow_ended: bool = False
) -> Session:
    if session is None:
        raise InvalidInput.for_field_message("session_id", f"unknown session_id: {session_id}")
    if session.status == Session.Status.ENDED and not allow_ended:
        raise InvalidInput.for_field_message(
            "session_id", f"session is already ended: {session_id}"
        )
    if scope is not None and session.scope != scope:
        raise InvalidInput.for_field_message("scope", "session_id and scope do not match")
    return session


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
    return _checked(session, session_id=session_id, scope=scope)


def session_claim(*, session_id: str, scope: str | None, now: datetime) -> None:
    """Inside the write transaction: touch the session if it is still open (taking the write
    lock), else raise session_check's error."""
    still_open = Session.objects.filter(pk=session_id, status=Session.Status.OPEN)
    if scope is not None:
        still_open = still_open.filter(scope=scope)
    if still_open.update(last_activity_at=now) != 1:
        session_check(session_id=session_id, scope=scope)


def event_append(
    *,
    session: Session,
    kind: str,
    content: str = "",
    role: str = "",
    now: datetime,
    occurred_at: datetime | None = None,
    metadata: dict[str, Any] | None = None,
    seq: int | None = None,
) -> Event:
    """Append an event; `seq` when the caller already knows the next one (batch writers)."""
    return Event.objects.create(
        session=session,
        seq=seq if seq is not None else event_next_seq(session),
        kind=kind,
        role=role,
        content=content,
        metadata=metadata or {},
        recorded_at=now,
        occurred_at=occurred_at,
    )


def event_next_seq(session: Session) -> int:
    return (Event.objects.filter(session=session).aggregate(m=Max("seq"))["m"] or 0) + 1


def session_touch(*, session: Session, now: datetime) -> None:
    Session.objects.filter(pk=session.pk).update(last_activity_at=now)
    session.last_activity_at = now


def continuity_resolve(
    *, data: ActivateIn, client: ClientInfo, now: datetime
) -> tuple[Continuity, str]:
    if data.continuity_id is None:
        from memory.ids import new_continuity_id

        created = Continuity.objects.create(
            id=new_continuity_id(),
            scope=data.scope,
            integration=client.name,
            client_identity=client.identity,
            created_at=now,
            last_seen_at=now,
        )
        return created, "started"
    continuity = Continuity.objects.filter(pk=data.continuity_id).first()
    if continuity is None:
        raise InvalidInput.for_field_message("continuity_id", "continuity_id is unknown")
    if continuity.scope != data.scope:
        raise InvalidInput.for_field_message(
            "continuity_id", "continuity_id and scope do not match"
        )
    if (
        continuity.client_identity
        and client.identity
        and continuity.client_identity != client.identity
    ):
        raise InvalidInput.for_field_message(
            "continuity_id", "continuity_id belongs to a different client"
        )
    Continuity.objects.filter(pk=continuity.pk).update(last_seen_at=now)
    return continuity, "continued"


def session_end_idle(*, session_id: str, now: datetime) -> bool:
    """Claim one idle session and close it through the commit path (spec §6.8)."""
    from memory.services.closing import session_close

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

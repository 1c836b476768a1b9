"""Session lifecycle: checks for later calls, event appends, continuity.

Closing a session lives in closing.py, the idle reaper that closes through it in reaping.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from memory.engines import bulk
from memory.errors import InvalidInput
from memory.ids import new_continuity_id
from memory.models import Continuity, Event, Session
from memory.schemas import ActivateIn


@dataclass(frozen=True)
class ClientInfo:
    name: str = ""
    version: str = ""
    identity: str = ""


def session_check(*, session_id: str, scope: str | None, allow_ended: bool = False) -> Session:
    """The open session for a call, locked for this transaction; rule errors of spec §14.

    The row lock (a no-op on SQLite, whose BEGIN IMMEDIATE already serialises writers) makes a
    session's parallel writers on PostgreSQL take turns, so each computes its event `seq` after
    the previous one committed."""
    session = Session.objects.select_for_update().filter(pk=session_id).first()
    return session_checked(session, session_id=session_id, scope=scope, allow_ended=allow_ended)


def session_checked(
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


def session_claim(*, session_id: str, scope: str | None, now: datetime) -> None:
    """Inside the write transaction: touch the session if it is still open (taking the write
    lock), else raise session_check's error."""
    still_open = Session.objects.filter(pk=session_id, status=Session.Status.OPEN)
    if scope is not None:
        still_open = still_open.filter(scope=scope)
    if still_open.update(last_activity_at=now) != 1:
        session_check(session_id=session_id, scope=scope)


@dataclass(frozen=True)
class NewEvent:
    """One event to append: what event_append takes, for writers that append several."""

    kind: str
    content: str = ""
    role: str = ""
    occurred_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


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
    new = NewEvent(kind, content, role, occurred_at, metadata or {})
    return events_append(session=session, events=[new], now=now, seq=seq)[0]


def events_append(
    *, session: Session, events: Sequence[NewEvent], now: datetime, seq: int | None = None
) -> list[Event]:
    """Append events in order, numbered from `seq` (else the session's next), in one insert."""
    first = seq if seq is not None else event_next_seq(session)
    return bulk.insert(
        [
            Event(
                session=session,
                seq=first + offset,
                kind=new.kind,
                role=new.role,
                content=new.content,
                metadata=new.metadata,
                recorded_at=now,
                occurred_at=new.occurred_at,
            )
            for offset, new in enumerate(events)
        ]
    )


def sessions_lock(session_ids: list[str]) -> None:
    """Inside a write transaction: claim these sessions' rows (in one order, so two callers
    never wait on each other), making their other writers wait until it commits. Where rows
    cannot be locked (SQLite), the transaction already is the only writer (BEGIN IMMEDIATE)
    and there is nothing to ask for."""
    if not connection.features.has_select_for_update:
        return
    list(
        Session.objects.select_for_update()
        .filter(pk__in=session_ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def event_next_seq(session: Session) -> int:
    """The session's next event number, computed under its row lock (max+1 is only safe when
    no other transaction can append to the session before this one commits)."""
    sessions_lock([session.pk])
    # The statement itself: building the ORM's aggregate cost more than running it.
    with connection.cursor() as cursor:
        table = Event._meta.db_table
        cursor.execute(f"SELECT MAX(seq) FROM {table} WHERE session_id = %s", [session.pk])
        (highest,) = cursor.fetchone()
    return (highest or 0) + 1


def session_touch(*, session: Session, now: datetime) -> None:
    Session.objects.filter(pk=session.pk).update(last_activity_at=now)
    session.last_activity_at = now


def continuity_resolve(
    *, data: ActivateIn, client: ClientInfo, now: datetime
) -> tuple[Continuity, str]:
    if data.continuity_id is None:
        created = bulk.create(
            Continuity,
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

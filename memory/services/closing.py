"""Closing a session: the path shared by commit, the reaper and import (spec §6.6, §6.8)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memory import embeddings
from memory.ids import procedure_id, procedure_index_key
from memory.indexing import index_procedure, indexed_text
from memory.models import Event, Procedure, Session
from memory.schemas import CommitProcedure
from memory.selectors.feedback import feedback_gaps
from memory.services.episodes import episodes_form
from memory.services.scheduling import enqueue_consolidation
from memory.services.sessions import NewEvent, events_append


def procedure_store(
    *,
    session: Session,
    spec: CommitProcedure,
    final_goal: str,
    outcome: str,
    outcome_summary: str,
    now: datetime,
) -> Procedure:
    proc = Procedure(
        id=procedure_id(session.id),
        index_key=procedure_index_key(session.id),
        session=session,
        scope=session.scope,
        goal=spec.goal or final_goal,
        summary=spec.summary,
        context=spec.context,
        steps=[s.model_dump() for s in spec.steps],
        caveats=list(spec.caveats),
        outcome=outcome,
        outcome_summary=outcome_summary,
        deduplication_key=spec.deduplication_key or None,
        created_at=now,
    )
    vectors = embeddings.encode([indexed_text(proc)])
    if vectors is not None:
        proc.embedding, proc.embedded_at = embeddings.to_blob(vectors[0]), now
    if proc.deduplication_key:
        # The older one leaves the active key before the new one takes it (the unique index);
        # its link to the new row is checked at commit, as every foreign key here is.
        Procedure.objects.filter(
            scope=session.scope,
            deduplication_key=proc.deduplication_key,
            status=Procedure.Status.ACTIVE,
        ).update(status=Procedure.Status.SUPERSEDED, superseded_by_id=proc.id)
    proc.save(force_insert=True)
    index_procedure(procedure=proc, vector=None if vectors is None else vectors[0])
    return proc


def session_close(
    *,
    session: Session,
    outcome: str,
    outcome_summary: str,
    final_goal: str,
    verification: dict[str, Any],
    ended_by: str,
    now: datetime,
    procedure: CommitProcedure | None = None,
    trajectory_events: Iterable[tuple[str, str, str]] = (),
    gaps: list[dict[str, Any]] | None = None,
    next_seq: int | None = None,
) -> int:
    """End the session (caller holds the transaction), form its episodes; returns their count.

    `gaps`, `next_seq`: the session's feedback_gaps and next event number when the caller has
    just read them under the session's lock (commit does)."""
    events = [
        NewEvent(kind, summary, metadata={"status": status})
        for kind, summary, status in trajectory_events
    ]
    if procedure is not None:
        events.append(NewEvent(Event.Kind.PROCEDURE, procedure.summary))
    events.append(
        NewEvent(
            Event.Kind.OUTCOME,
            f"{outcome}: {outcome_summary}".strip(": ").strip() or outcome,
            metadata={"verification": verification},
        )
    )
    events_append(session=session, events=events, now=now, seq=next_seq)
    if procedure is not None:
        procedure_store(
            session=session,
            spec=procedure,
            final_goal=final_goal or session.initial_goal,
            outcome=outcome,
            outcome_summary=outcome_summary,
            now=now,
        )
    if gaps is None:
        gaps = feedback_gaps(session=session)
    Session.objects.filter(pk=session.pk).update(
        status=Session.Status.ENDED,
        ended_at=now,
        ended_by=ended_by,
        final_goal=final_goal,
        outcome=outcome,
        outcome_summary=outcome_summary,
        verification=verification,
        feedback_status=Session.FeedbackStatus.INCOMPLETE
        if gaps
        else Session.FeedbackStatus.COMPLETE,
        last_activity_at=now,
    )
    formed = episodes_form(session_id=session.pk, now=now, session=session)
    enqueue_consolidation(scope=session.scope)
    return formed

"""slowave_commit: close a task with outcome, verification and an optional procedure (spec §6.6)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, cast

from django.db import transaction
from django.db.models import Count, Max, Q

from memory.errors import IncompleteFeedback, InvalidInput
from memory.models import Event, Procedure, Session
from memory.replies.verbs import CommitOut
from memory.schemas import CommitIn
from memory.secrets import SecretGuard, redactions_merged
from memory.selectors.feedback import feedback_gaps
from memory.services.closing import procedure_store, session_close
from memory.services.reaping import session_reap_if_idle

# Trajectory entries that narrate Slowave's own calls are bookkeeping, not task work.
_LIFECYCLE = re.compile(r"\bslowave[_ ](activate|remember|recall|feedback|commit)\b", re.IGNORECASE)
SESSION_NOTE = (
    "This session recorded several events but never called slowave_recall; when the question "
    "shifts mid-task, recall before acting on memory."
)


def session_commit(*, data: CommitIn, now: datetime) -> CommitOut:
    guard = SecretGuard()
    data = guard.clean_value(data, "")
    session_reap_if_idle(session_id=data.session_id, now=now)
    with transaction.atomic():
        session = Session.objects.select_for_update().filter(pk=data.session_id).first()
        if session is None:
            raise InvalidInput.for_field_message(
                "session_id", f"unknown session_id: {data.session_id}"
            )
        if guard.redacted:  # rolled back with the rest should the commit be refused below
            Session.objects.filter(pk=session.pk).update(
                redactions=redactions_merged(session.redactions, guard.redacted)
            )
        verification = data.verification.model_dump()
        if session.status == Session.Status.ENDED:
            return _redacted(_update_ended(session, data, verification, now), guard)
        outstanding = feedback_gaps(session=session)
        if outstanding:
            raise IncompleteFeedback("feedback is incomplete", outstanding=outstanding)
        kept = [t for t in data.trajectory or [] if not _LIFECYCLE.search(t.summary)]
        filtered = len(data.trajectory or []) - len(kept)
        seen = session.events.aggregate(
            events=Count("pk"),
            recalls=Count("pk", filter=Q(kind=Event.Kind.RECALL_QUERY)),
            last=Max("seq"),
        )
        formed = session_close(
            session=session,
            outcome=data.outcome,
            outcome_summary=data.outcome_summary,
            final_goal=data.final_goal,
            verification=verification,
            ended_by=Session.EndedBy.COMMIT,
            now=now,
            procedure=data.procedure,
            trajectory_events=[(f"trajectory_{t.kind}", t.summary, t.status) for t in kept],
            gaps=outstanding,
            next_seq=(seen["last"] or 0) + 1,  # under the session's lock taken above
        )
        reply: CommitOut = {
            "session_id": session.id,
            "episodes_formed": formed,
            "committed": True,
            "outcome": data.outcome,
            "feedback_status": "complete",
            "verification_status": data.verification.status,
            "operation": "closed",
        }
        if filtered:
            reply["trajectory_lifecycle_filtered"] = filtered
        if seen["events"] >= 3 and not seen["recalls"]:
            reply["session_note"] = SESSION_NOTE
        return _redacted(reply, guard)


def _redacted(reply: CommitOut, guard: SecretGuard) -> CommitOut:
    if guard.redacted:
        reply["redacted"] = guard.redacted
    return reply


def _update_ended(
    session: Session, data: CommitIn, verification: dict[str, Any], now: datetime
) -> CommitOut:
    Session.objects.filter(pk=session.pk).update(
        final_goal=data.final_goal,
        outcome=data.outcome,
        outcome_summary=data.outcome_summary,
        verification=verification,
    )
    if data.procedure is not None and not Procedure.objects.filter(session=session).exists():
        procedure_store(
            session=session,
            spec=data.procedure,
            final_goal=data.final_goal,
            outcome=data.outcome,
            outcome_summary=data.outcome_summary,
            now=now,
        )
    return {
        "session_id": session.id,
        "episodes_formed": 0,
        "committed": True,
        "outcome": data.outcome,
        # The model field holds one of the statuses CommitOut names.
        "feedback_status": cast(Any, session.feedback_status),
        "verification_status": data.verification.status,
        "operation": "updated",
        "already_ended": True,
    }

"""slowave_feedback: append-only, fail-closed assessments of what a retrieval showed (spec §6.5)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction

from memory.errors import NotFound
from memory.ids import new_feedback_id
from memory.models import Event, Exposure, FeedbackEvent, Retrieval, Session
from memory.schemas import FeedbackIn, FeedbackRecord, MemoryFeedback, ProcedureFeedback
from memory.secrets import SecretGuard, redactions_merged
from memory.services.feedback_rules import memory_rejection, procedure_rejection
from memory.services.reinforcement import Applied, reinforce_target
from memory.services.sessions import event_append

COMPARED = (
    "assessment",
    "relevance",
    "effect",
    "stale_reason",
    "replacement_memory_id",
    "reason",
    "use",
    "contribution",
)


def feedback_submit(*, data: FeedbackIn, now: datetime) -> dict[str, Any]:
    guard = SecretGuard()
    data = guard.clean_value(data, "")  # reasons and notes are stored with the feedback
    records = data.records()
    with transaction.atomic():
        retrievals = Retrieval.objects.select_related("session").in_bulk(
            [r.retrieval_id for r in records]
        )
        for record in records:
            if record.retrieval_id not in retrievals:
                raise NotFound(f"unknown retrieval_id: {record.retrieval_id}")
        replies = [_record(record, retrievals[record.retrieval_id], now) for record in records]
        for path, kinds in guard.redacted.items():
            record = records[int(path[6 : path.index("]")]) if path.startswith("items[") else 0]
            _note_redacted(retrievals[record.retrieval_id].session_id, {path: kinds})
    return (
        replies[0]
        if data.items is None
        else {"results": [{"ok": True, "data": r} for r in replies]}
    )


def _note_redacted(session_id: str, redacted: dict[str, dict[str, int]]) -> None:
    held = Session.objects.get(pk=session_id).redactions
    Session.objects.filter(pk=session_id).update(
        redactions=redactions_merged(held, redacted, "feedback")
    )


def _latest_accepted(retrieval: Retrieval) -> dict[tuple[str, str], FeedbackEvent]:
    latest: dict[tuple[str, str], FeedbackEvent] = {}
    rows = FeedbackEvent.objects.filter(retrieval=retrieval, status=FeedbackEvent.Status.ACCEPTED)
    for row in rows.exclude(target_kind="retrieval").order_by("created_at", "pk"):
        latest[(row.target_kind, row.target_id)] = row
    return latest


def _record(record: FeedbackRecord, retrieval: Retrieval, now: datetime) -> dict[str, Any]:
    exposures = set(
        Exposure.objects.filter(retrieval=retrieval).values_list("target_kind", "target_id")
    )
    latest = _latest_accepted(retrieval)
    accepted_ids: list[str] = []
    rejected: list[dict[str, str]] = []
    applied = Applied()
    targets: list[tuple[str, str, MemoryFeedback | ProcedureFeedback, str | None]] = [
        (
            "memory",
            e.memory_id,
            e,
            memory_rejection(
                e, exposed={t for k, t in exposures if k == "memory"}, retrieval=retrieval
            ),
        )
        for e in record.memory_feedback or []
    ]
    targets += [
        (
            "procedure",
            e.procedure_id,
            e,
            procedure_rejection(e, exposed={t for k, t in exposures if k == "procedure"}),
        )
        for e in record.procedure_feedback or []
    ]
    for kind, target_id, entry, reason in targets:
        values = {name: getattr(entry, name, None) or "" for name in COMPARED}
        if kind == "memory" and values["assessment"] == "used" and not values["effect"]:
            values["effect"] = "helped"
        if reason is not None:
            _append(
                retrieval,
                kind,
                target_id,
                now,
                status="rejected",
                rejection_reason=reason,
                **values,
            )
            rejected.append({"target_id": target_id, "reason": reason})
            continue
        previous = latest.get((kind, target_id))
        if previous is not None and all(getattr(previous, n) == v for n, v in values.items()):
            accepted_ids.append(previous.id)
            applied.unchanged += kind == "memory"
            continue
        row = _append(
            retrieval, kind, target_id, now, status="accepted", refines_event=previous, **values
        )
        latest[(kind, target_id)] = row
        accepted_ids.append(row.id)
        if kind == "memory":
            reinforce_target(row=row, applied=applied)
    gaps = sorted(exposures - set(latest))
    outstanding = {
        "memory_ids": [t for k, t in gaps if k == "memory"],
        "procedure_ids": [t for k, t in gaps if k == "procedure"],
    }
    coverage_reason = "incomplete_coverage" if record.coverage == "complete" and gaps else ""
    summary = _append(
        retrieval,
        "retrieval",
        retrieval.id,
        now,
        status="rejected" if coverage_reason else "accepted",
        rejection_reason=coverage_reason,
        coverage=record.coverage,
        retrieval_quality=record.retrieval_quality or "",
        missing=record.missing or [],
    )
    if coverage_reason:
        rejected.append({"target_id": retrieval.id, "reason": coverage_reason})
    else:
        accepted_ids.append(summary.id)
    event_append(
        session=retrieval.session,
        kind=Event.Kind.FEEDBACK,
        now=now,
        content=f"feedback on {retrieval.id}",
        metadata={"retrieval_id": retrieval.id},
    )
    return {
        "retrieval_id": retrieval.id,
        "coverage": record.coverage,
        "outstanding": outstanding,
        "accepted_event_ids": accepted_ids,
        "rejected": rejected,
        "applied": applied.as_dict(),
    }


def _append(
    retrieval: Retrieval, kind: str, target_id: str, now: datetime, **fields: Any
) -> FeedbackEvent:
    return FeedbackEvent.objects.create(
        id=new_feedback_id(),
        retrieval=retrieval,
        target_kind=kind,
        target_id=target_id,
        created_at=now,
        **fields,
    )

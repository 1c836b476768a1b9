"""slowave_feedback: append-only, fail-closed assessments of what a retrieval showed (spec §6.5)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from django.db import transaction

from memory.engines import bulk
from memory.errors import NotFound
from memory.ids import new_feedback_id
from memory.models import Event, Exposure, FeedbackEvent, Retrieval, Session
from memory.replies.verbs import FeedbackOut, FeedbackRecordOut, OutstandingOut, RejectedOut
from memory.schemas import FeedbackIn, FeedbackRecord, MemoryFeedback, ProcedureFeedback
from memory.secrets import SecretGuard, redactions_merged
from memory.services.feedback_rules import memory_rejection, procedure_rejection
from memory.services.reinforcement import Applied, reinforce_targets
from memory.services.sessions import NewEvent, events_append, sessions_lock

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


def feedback_submit(*, data: FeedbackIn, now: datetime) -> FeedbackOut:
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
        # Before any memory row is locked for reinforcement: remember takes the session first.
        sessions_lock(sorted({r.session_id for r in retrievals.values()}))
        shown = _Shown.load(list(retrievals))
        pending = _Pending()
        made = [
            _record(record, retrievals[record.retrieval_id], shown, pending, now)
            for record in records
        ]
        pending.flush()
        _note_feedback(records, retrievals, now)
        # Each record's tally is complete once the call's rows are applied.
        replies = [cast(FeedbackRecordOut, {**reply, "applied": a.as_dict()}) for reply, a in made]
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


@dataclass(frozen=True)
class _Shown:
    """What each retrieval of the call exposed and its latest accepted row per target, read
    in two queries for the whole call (a record's rows update `latest` as they are made)."""

    exposures: dict[str, set[tuple[str, str]]]
    latest: dict[str, dict[tuple[str, str], FeedbackEvent]]

    @classmethod
    def load(cls, ids: list[str]) -> _Shown:
        exposures: dict[str, set[tuple[str, str]]] = {i: set() for i in ids}
        shown = Exposure.objects.filter(retrieval_id__in=ids)
        for retrieval_id, kind, target in shown.values_list(
            "retrieval_id", "target_kind", "target_id"
        ):
            exposures[retrieval_id].add((kind, target))
        latest: dict[str, dict[tuple[str, str], FeedbackEvent]] = {i: {} for i in ids}
        accepted = FeedbackEvent.objects.filter(
            retrieval_id__in=ids, status=FeedbackEvent.Status.ACCEPTED
        )
        for row in accepted.exclude(target_kind="retrieval").order_by("created_at", "pk"):
            latest[row.retrieval_id][(row.target_kind, row.target_id)] = row
        return cls(exposures=exposures, latest=latest)


def _entries(record: FeedbackRecord) -> list[tuple[str, str, MemoryFeedback | ProcedureFeedback]]:
    entries: list[tuple[str, str, MemoryFeedback | ProcedureFeedback]] = [
        ("memory", e.memory_id, e) for e in record.memory_feedback or []
    ]
    return entries + [("procedure", e.procedure_id, e) for e in record.procedure_feedback or []]


def _rejection(
    kind: str,
    entry: MemoryFeedback | ProcedureFeedback,
    retrieval: Retrieval,
    exposures: set[tuple[str, str]],
) -> str | None:
    exposed = {t for k, t in exposures if k == kind}
    if isinstance(entry, MemoryFeedback):
        return memory_rejection(entry, exposed=exposed, retrieval=retrieval)
    return procedure_rejection(entry, exposed=exposed)


class _Pending:
    """The call's feedback rows and their reinforcement, written together at the end (or
    sooner, when a later entry's check must see them applied)."""

    def __init__(self) -> None:
        self.rows: list[FeedbackEvent] = []
        self.reinforce: list[FeedbackEvent] = []
        self.tallies: list[Applied] = []
        self.retiring: set[str] = set()  # memories accepted rows not yet applied mark stale

    def flush(self) -> None:
        bulk.insert(self.rows)
        reinforce_targets(rows=self.reinforce, applied=self.tallies)
        self.rows, self.reinforce, self.tallies = [], [], []
        self.retiring.clear()


def _record(
    record: FeedbackRecord, retrieval: Retrieval, shown: _Shown, pending: _Pending, now: datetime
) -> tuple[dict[str, Any], Applied]:
    """A record's rows, added to `pending`; its reply but for `applied`, and that tally."""
    exposures, latest = shown.exposures[retrieval.id], shown.latest[retrieval.id]
    accepted_ids: list[str] = []
    rejected: list[RejectedOut] = []
    applied = Applied()

    def append(kind: str, target_id: str, **fields: Any) -> FeedbackEvent:
        row = FeedbackEvent(
            id=new_feedback_id(),
            retrieval=retrieval,
            target_kind=kind,
            target_id=target_id,
            created_at=now,
            **fields,
        )
        pending.rows.append(row)
        return row

    for kind, target_id, entry in _entries(record):
        if getattr(entry, "replacement_memory_id", None) in pending.retiring:
            pending.flush()  # its replacement check must see the earlier rows applied
        reason = _rejection(kind, entry, retrieval, exposures)
        values = {name: getattr(entry, name, None) or "" for name in COMPARED}
        if kind == "memory" and values["assessment"] == "used" and not values["effect"]:
            values["effect"] = "helped"
        if reason is not None:
            append(kind, target_id, status="rejected", rejection_reason=reason, **values)
            rejected.append({"target_id": target_id, "reason": reason})
            continue
        previous = latest.get((kind, target_id))
        if previous is not None and all(getattr(previous, n) == v for n, v in values.items()):
            accepted_ids.append(previous.id)
            applied.unchanged += kind == "memory"
            continue
        row = append(kind, target_id, status="accepted", refines_event=previous, **values)
        latest[(kind, target_id)] = row
        accepted_ids.append(row.id)
        if kind == "memory":
            pending.reinforce.append(row)
            pending.tallies.append(applied)
            if row.assessment == "stale":
                pending.retiring.add(target_id)
    gaps = sorted(exposures - set(latest))
    outstanding: OutstandingOut = {
        "memory_ids": [t for k, t in gaps if k == "memory"],
        "procedure_ids": [t for k, t in gaps if k == "procedure"],
    }
    coverage_reason = "incomplete_coverage" if record.coverage == "complete" and gaps else ""
    summary = append(
        "retrieval",
        retrieval.id,
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
    reply = {
        "retrieval_id": retrieval.id,
        "coverage": record.coverage,
        "outstanding": outstanding,
        "accepted_event_ids": accepted_ids,
        "rejected": rejected,
    }
    return reply, applied


def _note_feedback(
    records: list[FeedbackRecord], retrievals: dict[str, Retrieval], now: datetime
) -> None:
    """One feedback event per record in its retrieval's session, each session's in one insert."""
    by_session: dict[str, tuple[Session, list[NewEvent]]] = {}
    for record in records:
        retrieval = retrievals[record.retrieval_id]
        session, events = by_session.setdefault(retrieval.session_id, (retrieval.session, []))
        events.append(
            NewEvent(
                Event.Kind.FEEDBACK,
                f"feedback on {retrieval.id}",
                metadata={"retrieval_id": retrieval.id},
            )
        )
    for session, events in by_session.values():
        events_append(session=session, events=events, now=now)

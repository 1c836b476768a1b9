"""Payloads shown to agents for memories, procedures and evidence (spec §6.2, §6.4)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from memory.ids import epoch, memory_ref
from memory.models import FeedbackEvent, Memory, Procedure
from memory.retrieval.paging import excerpt

if TYPE_CHECKING:
    from memory.replies.verbs import EvidenceOut, EvidenceRefOut
    from memory.retrieval.candidates import EpisodeRow, MemoryRow

FAILED_CAVEAT = (
    "This procedure previously failed; treat it as cautionary evidence, not recommended guidance."
)
HARMED_CAVEAT = (
    "Later uses marked this procedure harmed more often than helped (see track_record); "
    "treat it as cautionary evidence, whatever its original outcome."
)
TRACK_EFFECTS = ("helped", "no_effect", "harmed")
SOURCE_KIND: dict[str, str] = {
    Memory.Origin.EXPLICIT: "explicit_remember",
    Memory.Origin.CONSOLIDATED: "consolidated",
    Memory.Origin.IMPORTED: "imported",
}
EVIDENCE_CONTENT_LIMIT = 1_000


def memory_payload(
    memory: Memory | MemoryRow, *, scope: str, query: str, pathway: str
) -> dict[str, Any]:
    content, truncated = excerpt(memory.content, query)
    currency = "historical" if memory.status == Memory.Status.STALE else "current"
    payload: dict[str, Any] = {
        "memory_id": memory_ref(memory.pk),
        "type": memory.type,
        "content": content,
        "pathway": pathway,
        "currency": currency,
    }
    if truncated:
        payload["content_truncated"] = True
    provenance: dict[str, Any] = {"source_kind": SOURCE_KIND.get(memory.origin, memory.origin)}
    for key in ("integration", "integration_version"):
        if memory.provenance.get(key):
            provenance[key] = memory.provenance[key]
    provenance["observed"] = epoch(memory.created_at)
    if memory.occurred_at is not None:
        provenance["occurred_at"] = epoch(memory.occurred_at)
    if memory.scope != scope:
        provenance["origin_scope"] = memory.scope
    if memory.superseded_by_id:
        provenance["superseded_by"] = memory_ref(memory.superseded_by_id)
    payload["provenance"] = provenance
    return payload


def episode_ref(pk: int) -> str:
    """An imported turn's id on a page (the same id its recall evidence carries)."""
    return f"ep_{pk}"


def episode_payload(episode: EpisodeRow, *, query: str) -> dict[str, Any]:
    """An imported turn shown among the memories: marked as an episode, its text bounded like
    a memory's, with the session it came from."""
    content, truncated = excerpt(episode.content, query)
    payload: dict[str, Any] = {
        "episode_id": episode_ref(episode.pk),
        "type": "episode",
        "content": content,
        "pathway": "direct",
    }
    if truncated:
        payload["content_truncated"] = True
    provenance: dict[str, Any] = {
        "source_kind": "imported_session",
        "session_id": episode.session_id,
        "observed": epoch(episode.recorded_at),
    }
    if episode.occurred_at is not None:
        provenance["occurred_at"] = epoch(episode.occurred_at)
    payload["provenance"] = provenance
    return payload


def _caveats(proc: Procedure, track: dict[str, Any]) -> list[str]:
    caveats = list(proc.caveats)
    if track["harm_dominates"] and HARMED_CAVEAT not in caveats:
        caveats.insert(0, HARMED_CAVEAT)
    if proc.outcome == "failure" and FAILED_CAVEAT not in caveats:
        caveats.insert(0, FAILED_CAVEAT)
    return caveats


def track_record(rows: list[FeedbackEvent]) -> dict[str, Any]:
    """How a procedure fared when agents used it, from `rows` (latest_procedure_feedback):
    helped / no effect / harmed counts, and whether harm dominates (more harmed than helped).
    The commit's own `outcome` says how the task that taught it went; this says how it did
    since, which agents and people read beside it."""
    used = [row.effect for row in rows if row.use == "used"]
    counts: dict[str, Any] = {key: used.count(key) for key in TRACK_EFFECTS}
    counts["harm_dominates"] = counts["harmed"] > counts["helped"]
    return counts


def procedure_preview(
    proc: Procedure, *, scope: str, rows: list[FeedbackEvent] | None = None
) -> dict[str, Any]:
    """`rows`: its latest_procedure_feedback, when the caller has them already."""
    track = track_record(latest_procedure_feedback(proc.pk) if rows is None else rows)
    payload = {
        "procedure_id": proc.pk,
        "goal": proc.goal,
        "summary": proc.summary,
        "outcome": proc.outcome,
        "outcome_summary": proc.outcome_summary,
        "track_record": track,
        "caveats": _caveats(proc, track),
    }
    if proc.scope != scope:
        payload["origin_scope"] = proc.scope
    return payload


def latest_procedure_feedback(proc_id: str) -> list[FeedbackEvent]:
    """The latest accepted row per retrieval for a procedure."""
    return procedures_feedback([proc_id]).get(proc_id, [])


def procedures_feedback(proc_ids: list[str]) -> dict[str, list[FeedbackEvent]]:
    """latest_procedure_feedback of several procedures in one query (a page's procedures)."""
    if not proc_ids:
        return {}
    rows = FeedbackEvent.objects.filter(
        target_kind="procedure", target_id__in=proc_ids, status=FeedbackEvent.Status.ACCEPTED
    ).order_by("target_id", "retrieval_id", "-created_at", "-pk")
    latest: dict[tuple[str, str], FeedbackEvent] = {}
    for row in rows:
        latest.setdefault((row.target_id, row.retrieval_id), row)
    found: dict[str, list[FeedbackEvent]] = {}
    for (target, _), row in latest.items():
        found.setdefault(target, []).append(row)
    return found


def procedure_full(
    proc: Procedure, *, scope: str, rows: list[FeedbackEvent] | None = None
) -> dict[str, Any]:
    """`rows`: its latest_procedure_feedback, when the caller has them already."""
    rows = latest_procedure_feedback(proc.pk) if rows is None else rows
    payload = procedure_preview(proc, scope=scope, rows=rows)
    counts: dict[str, int] = {}
    for row in rows:
        for key in (row.use, row.effect):
            if key:
                counts[key] = counts.get(key, 0) + 1
    contributions = [
        {
            "effect": row.effect,
            "contribution": row.contribution,
            "outcome": row.retrieval.session.outcome,
            "outcome_summary": row.retrieval.session.outcome_summary,
            "occurred_at": epoch(row.created_at),
        }
        for row in sorted(rows, key=lambda r: r.created_at, reverse=True)
        if row.use == "used" and row.contribution
    ][:3]
    payload.update(
        {
            "context": proc.context,
            "steps": proc.steps,
            "created_at": epoch(proc.created_at),
            "evidence": counts,
            "contributions": contributions,
        }
    )
    return payload


def _evidence_item(
    evidence_id: str,
    source_kind: Literal["episode", "event"],
    recorded_at: datetime,
    occurred_at: datetime | None,
    ref: EvidenceRefOut,
    content: str,
    full: bool,
) -> EvidenceOut:
    item: EvidenceOut = {
        "evidence_id": evidence_id,
        "source_kind": source_kind,
        "recorded_at": epoch(recorded_at),
        "occurred_at": epoch(occurred_at),
        "source_ref": ref,
    }
    if full:
        item["content"] = content[:EVIDENCE_CONTENT_LIMIT]
        item["truncated"] = len(content) > EVIDENCE_CONTENT_LIMIT
    return item


# A memory's source event: id, recorded_at, occurred_at, content.
SourceEvent = tuple[int, datetime, datetime | None, str]


def event_evidence(event: SourceEvent, memory_pk: int, full: bool) -> EvidenceOut:
    """A memory's source event (storage_engine().source_events) as recall evidence."""
    pk, recorded_at, occurred_at, content = event
    return _evidence_item(
        f"evt_{pk}",
        "event",
        recorded_at,
        occurred_at,
        {"kind": "memory", "id": memory_ref(memory_pk)},
        content,
        full,
    )


def episode_evidence(episode, full: bool) -> EvidenceOut:
    return _evidence_item(
        f"ep_{episode.pk}",
        "episode",
        episode.recorded_at,
        episode.occurred_at,
        {"kind": "session", "id": episode.session_id},
        episode.content,
        full,
    )

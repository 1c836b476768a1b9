"""Reads for people (admin, CLI `show`): evidence chains, retrieval and session detail.

Nothing here writes and nothing here creates a Retrieval or Exposure: inspecting memory must
never look like an agent having been shown it. Writes live in memory/services/.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from django.db.models import Count, Q
from typing_extensions import TypedDict

from memory.ids import memory_pk, memory_ref
from memory.models import (
    Association,
    Episode,
    Event,
    Exposure,
    FeedbackEvent,
    ForgetLog,
    Memory,
    Procedure,
    Prototype,
    Retrieval,
    Session,
    Support,
)
from memory.selectors.feedback import feedback_gaps

if TYPE_CHECKING:
    from memory.replies.reads import (
        AssociationOut,
        GapOut,
        GeneralizationOut,
        MemoryEvidenceOut,
        SupportOut,
    )


class SupportRow(TypedDict):
    kind: str
    event: Event | None
    episode: Episode | None
    session: Session | None
    scope: str
    weight: float
    created_at: datetime


class ExposureSeen(TypedDict):
    """One time a retrieval showed a memory, and what the agent said about it."""

    exposure: Exposure
    retrieval: Retrieval
    session_id: str
    feedback: str
    latest: FeedbackEvent | None
    rejected: list[FeedbackEvent]


class MemoryEvidence(TypedDict):
    """A memory's evidence chain as rows (`evidence_as_data` flattens it for JSON)."""

    memory: Memory
    ref: str
    supports: list[SupportRow]
    sessions: list[Session]
    exposures: list[ExposureSeen]
    superseded_by: Memory | None
    duplicate_of: Memory | None
    supersedes: list[Memory]
    duplicates: list[Memory]
    associations: list[AssociationOut]
    generalization: GeneralizationOut
    forget_log: list[ForgetLog]


class ExposureRow(TypedDict):
    exposure: Exposure
    feedback: str
    missing: bool
    rejected: list[FeedbackEvent]


class RetrievalDetail(TypedDict):
    retrieval: Retrieval
    rows: list[ExposureRow]
    missing_count: int
    unshown: list[dict[str, Any]]  # catalog items of pages never shown
    summaries: list[FeedbackEvent]
    not_exposed_feedback: list[FeedbackEvent]


class SessionRetrieval(TypedDict):
    retrieval: Retrieval
    exposed: int
    gap: GapOut | None  # what still lacks feedback (services.closing.feedback_gaps)


class SessionDetail(TypedDict):
    session: Session
    events: list[Event]
    retrievals: list[SessionRetrieval]
    complete: bool
    episodes: list[Episode]
    memories: list[Memory]
    procedure: Procedure | None


STAGE_NAMES = {
    0: "origin scope only",
    1: "portable (same scope kind)",
    2: "contextual (any scope, discounted)",
    3: "global (any scope)",
}


def feedback_by_target(retrieval_ids: list[str]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(retrieval, kind, target) → {latest accepted row, rejected rows}; absent = unknown."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    rows = FeedbackEvent.objects.filter(retrieval_id__in=retrieval_ids).exclude(
        target_kind="retrieval"
    )
    for row in rows.order_by("created_at", "pk"):
        entry = found.setdefault(
            (row.retrieval_id, row.target_kind, row.target_id),
            {"latest": None, "rejected": [], "history": 0},
        )
        entry["history"] += 1
        if row.status == FeedbackEvent.Status.ACCEPTED:
            entry["latest"] = row
        else:
            entry["rejected"].append(row)
    return found


def feedback_label(entry: dict[str, Any] | None) -> str:
    """One line a person can read: what the agent said about a shown item, or `unknown`."""
    if entry is None or entry["latest"] is None:
        return "unknown (no accepted feedback)"
    row = entry["latest"]
    if row.target_kind == "procedure":
        return f"{row.use} / {row.effect or 'unknown'}"
    parts = [row.assessment]
    if row.effect:
        parts.append(row.effect)
    if row.stale_reason:
        parts.append(row.stale_reason)
    return " / ".join(parts)


def memory_get(*, memory_id: str) -> Memory | None:
    pk = memory_pk(memory_id)
    return Memory.objects.filter(pk=pk).first() if pk is not None else None


def _supports(memory: Memory) -> list[SupportRow]:
    rows = memory.supports.select_related("event", "episode", "session").order_by(
        "created_at", "pk"
    )
    return [
        {
            "kind": s.kind,
            "event": s.event,
            "episode": s.episode,
            "session": s.session,
            "scope": s.scope,
            "weight": s.weight,
            "created_at": s.created_at,
        }
        for s in rows
    ]


def _exposures(ref: str) -> list[ExposureSeen]:
    exposures = list(
        Exposure.objects.filter(target_kind="memory", target_id=ref)
        .select_related("retrieval")
        .order_by("exposed_at", "pk")
    )
    feedback = feedback_by_target([e.retrieval_id for e in exposures])
    out: list[ExposureSeen] = []
    for exposure in exposures:
        entry = feedback.get((exposure.retrieval_id, "memory", ref))
        out.append(
            {
                "exposure": exposure,
                "retrieval": exposure.retrieval,
                "session_id": exposure.retrieval.session_id,
                "feedback": feedback_label(entry),
                "latest": entry["latest"] if entry else None,
                "rejected": entry["rejected"] if entry else [],
            }
        )
    return out


def generalization_evidence(memory: Memory) -> GeneralizationOut:
    """Why a memory has its stage (spec §7.4): the scopes and sessions that vouch for it."""
    ref = memory_ref(memory.pk)
    scopes, sessions = {memory.scope}, set()
    if memory.source_session_id:
        sessions.add(memory.source_session_id)
    vouching = memory.supports.filter(kind__in=[Support.Kind.CORROBORATION, Support.Kind.REPEAT])
    for scope, session_id in vouching.values_list("scope", "session_id"):
        scopes.add(scope)
        if session_id:
            sessions.add(session_id)
    used = FeedbackEvent.objects.filter(
        target_kind="memory", target_id=ref, status="accepted", assessment="used"
    ).exclude(effect="harmed")
    for scope, session_id in used.values_list("retrieval__scope", "retrieval__session_id"):
        scopes.add(scope)
        sessions.add(session_id)
    return {
        "stage": memory.generalization_stage,
        "stage_name": STAGE_NAMES.get(memory.generalization_stage, "?"),
        "evidence_scopes": sorted(scopes),
        "evidence_sessions": len(sessions),
        "scope_kinds": sorted({s.partition(":")[0] for s in scopes}),
    }


def memory_evidence(*, memory: Memory) -> MemoryEvidence:
    """The full evidence chain of one memory, in the order a person reads it."""
    ref = memory_ref(memory.pk)
    supports = _supports(memory)
    session_ids = {s["session"].pk for s in supports if s["session"] is not None}
    if memory.source_session_id:
        session_ids.add(memory.source_session_id)
    edges = Association.objects.filter(Q(src=memory) | Q(dst=memory)).order_by("-weight")
    return {
        "memory": memory,
        "ref": ref,
        "supports": supports,
        "sessions": list(Session.objects.filter(pk__in=session_ids).order_by("started_at")),
        "exposures": _exposures(ref),
        "superseded_by": memory.superseded_by,
        "duplicate_of": memory.duplicate_of,
        "supersedes": list(Memory.objects.filter(superseded_by=memory).order_by("pk")),
        "duplicates": list(Memory.objects.filter(duplicate_of=memory).order_by("pk")),
        "associations": [
            {
                "kind": e.kind,
                "weight": e.weight,
                "other": memory_ref(e.dst_id if e.src_id == memory.pk else e.src_id),
            }
            for e in edges[:50]
        ],
        "generalization": generalization_evidence(memory),
        "forget_log": list(ForgetLog.objects.filter(memory=memory).order_by("created_at", "pk")),
    }


def retrieval_detail(*, retrieval: Retrieval) -> RetrievalDetail:
    """What a retrieval exposed, by which pathway, and what each target got back."""
    exposures = list(retrieval.exposures.order_by("rank"))
    feedback = feedback_by_target([retrieval.pk])
    rows: list[ExposureRow] = []
    for exposure in exposures:
        entry = feedback.get((retrieval.pk, exposure.target_kind, exposure.target_id))
        rows.append(
            {
                "exposure": exposure,
                "feedback": feedback_label(entry),
                "missing": entry is None or entry["latest"] is None,
                "rejected": entry["rejected"] if entry else [],
            }
        )
    exposed = {(e.target_kind, e.target_id) for e in exposures}
    unshown = [
        item
        for page in retrieval.catalog.get("pages", [])
        for item in [*page.get("memories", []), *page.get("procedures", [])]
        if (item["kind"], item["ref"]) not in exposed
    ]
    summaries = list(
        retrieval.feedback.filter(target_kind="retrieval").order_by("created_at", "pk")
    )
    stray = [
        row
        for row in retrieval.feedback.exclude(target_kind="retrieval").order_by("created_at")
        if (row.target_kind, row.target_id) not in exposed
    ]
    return {
        "retrieval": retrieval,
        "rows": rows,
        "missing_count": sum(r["missing"] for r in rows),
        "unshown": unshown,
        "summaries": summaries,
        "not_exposed_feedback": stray,
    }


def session_detail(*, session: Session) -> SessionDetail:
    retrievals = list(
        session.retrievals.order_by("created_at", "pk").annotate(
            exposed=Count("exposures", distinct=True)
        )
    )
    gaps = {gap["retrieval_id"]: cast("GapOut", gap) for gap in feedback_gaps(session=session)}
    return {
        "session": session,
        "events": list(session.events.order_by("seq")),
        "retrievals": [
            {"retrieval": r, "exposed": r.exposed, "gap": gaps.get(r.pk)} for r in retrievals
        ],
        "complete": not gaps,
        "episodes": list(session.episodes.order_by("pk")),
        "memories": list(Memory.objects.filter(source_session=session).order_by("pk")),
        "procedure": Procedure.objects.filter(session=session).first(),
    }


def object_by_ref(*, ref: str) -> Any:
    """Any public id (sch_, proc_, sess_, ctx_/rec_, ep_, evt_, pro_, fbe_) → its row, or None."""
    ref = (ref or "").strip()
    prefix, _, rest = ref.partition("_")
    integer: dict[str, type[Memory] | type[Episode] | type[Event] | type[Prototype]] = {
        "sch": Memory,
        "ep": Episode,
        "evt": Event,
        "pro": Prototype,
    }
    if prefix in integer:
        return integer[prefix].objects.filter(pk=int(rest)).first() if rest.isdigit() else None
    string: dict[str, type[Procedure] | type[Session] | type[Retrieval] | type[FeedbackEvent]] = {
        "proc": Procedure,
        "sess": Session,
        "ctx": Retrieval,
        "rec": Retrieval,
        "fbe": FeedbackEvent,
    }
    model = string.get(prefix)
    return model.objects.filter(pk=ref).first() if model is not None else None


def record_of(obj: Any) -> dict[str, Any]:
    """A row as plain data: concrete fields by column name, vectors left out."""
    from django.db import models

    return {
        f.attname: getattr(obj, f.attname)
        for f in obj._meta.concrete_fields
        if not isinstance(f, models.BinaryField)
    }


def evidence_as_data(chain: MemoryEvidence) -> MemoryEvidenceOut:
    """The evidence chain with rows flattened, for `slowave show --json`."""

    def rec(value: Any) -> Any:
        return record_of(value) if hasattr(value, "_meta") else value

    return {
        "memory": record_of(chain["memory"]) | {"id": chain["ref"]},
        "supports": [
            cast("SupportOut", {k: rec(v) for k, v in s.items()}) for s in chain["supports"]
        ],
        "sessions": [record_of(s) for s in chain["sessions"]],
        "exposures": [
            {
                "retrieval_id": e["retrieval"].pk,
                "retrieval_kind": e["retrieval"].kind,
                "session_id": e["session_id"],
                "pathway": e["exposure"].pathway,
                "currency": e["exposure"].currency,
                "rank": e["exposure"].rank,
                "exposed_at": e["exposure"].exposed_at,
                "feedback": e["feedback"],
                "rejected": [r.rejection_reason for r in e["rejected"]],
            }
            for e in chain["exposures"]
        ],
        "superseded_by": str(chain["superseded_by"]) if chain["superseded_by"] else None,
        "duplicate_of": str(chain["duplicate_of"]) if chain["duplicate_of"] else None,
        "supersedes": [str(m) for m in chain["supersedes"]],
        "duplicates": [str(m) for m in chain["duplicates"]],
        "associations": chain["associations"],
        "generalization": chain["generalization"],
        "forget_log": [record_of(f) for f in chain["forget_log"]],
    }

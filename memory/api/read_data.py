"""What the read-only routes answer: their query models and the data each envelope carries.

Each function calls one or two selectors and shapes their rows into the JSON the route
returns; memory/api/reads.py runs them in the HTTP worker pool. Queries live in
memory.selectors; nothing here writes, and nothing here creates a Retrieval or Exposure.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from ninja import Schema
from pydantic import Field
from typing_extensions import TypedDict

from memory.errors import NotFound
from memory.ids import memory_ref
from memory.models import Memory
from memory.replies.reads import (
    MemoriesOut,
    MemoryEvidenceOut,
    ProceduresOut,
    RetrievalDetailOut,
    SessionDetailOut,
    SessionsOut,
    StatsOut,
)
from memory.replies.records import MemoryRow, ProcedureRecord
from memory.selectors import (
    Listing,
    evidence_as_data,
    memory_evidence,
    memory_get,
    memory_list,
    procedure_get,
    procedure_list,
    record_of,
    retrieval_detail,
    retrieval_explain,
    retrieval_get,
    scope_stats,
    session_detail,
    session_get,
    session_list,
)

PAGE_MAX = 200
OFFSET_MAX = 1_000_000_000  # far past any store; beyond 2**63 SQLite cannot even bind it


class Page(Schema):
    limit: int = Field(50, ge=1, le=PAGE_MAX)
    offset: int = Field(0, ge=0, le=OFFSET_MAX)


class MemoryFilters(Page):
    scope: str | None = None
    status: str | None = None
    type: str | None = None
    q: str | None = Field(None, description="substring of the content (case-insensitive)")
    order: Literal["newest", "salience"] = Field(
        "newest", description="newest first, or most salient first (ties newest first)"
    )


class ScopeFilters(Page):
    scope: str | None = None
    status: str | None = None


class ExplainFilters(Schema):
    all: bool = Field(
        False,
        description="explain every catalogued item, not only page one and what was shown later",
    )


class _Counts(TypedDict):
    total: int
    limit: int
    offset: int


def _counts(listing: Listing[Any], page: Page) -> _Counts:
    """What every list reply carries after its rows."""
    return {"total": listing.total, "limit": page.limit, "offset": page.offset}


def _memory_row(memory: Memory) -> MemoryRow:
    record = record_of(memory)
    record["id"] = memory_ref(memory.pk)
    for fk in ("superseded_by_id", "duplicate_of_id"):
        record[fk] = memory_ref(record[fk]) if record[fk] else None
    return record


def memories_page(*, filters: MemoryFilters) -> MemoriesOut:
    listing = memory_list(
        scope=filters.scope,
        status=filters.status,
        memory_type=filters.type,
        q=filters.q,
        order=filters.order,
        limit=filters.limit,
        offset=filters.offset,
    )
    return {"memories": [_memory_row(m) for m in listing.rows], **_counts(listing, filters)}


def memory_data(*, memory_id: str) -> MemoryEvidenceOut:
    found = memory_get(memory_id=memory_id)
    if found is None:
        raise NotFound(f"no memory {memory_id}; GET /api/memories?q=… finds ids")
    return evidence_as_data(memory_evidence(memory=found))


def sessions_page(*, filters: ScopeFilters) -> SessionsOut:
    listing = session_list(
        scope=filters.scope, status=filters.status, limit=filters.limit, offset=filters.offset
    )
    return {"sessions": [record_of(s) for s in listing.rows], **_counts(listing, filters)}


def session_data(*, session_id: str) -> SessionDetailOut:
    found = session_get(session_id=session_id)
    if found is None:
        raise NotFound(f"no session {session_id}; GET /api/sessions lists them")
    detail = session_detail(session=found)
    return {
        "session": record_of(found),
        "events": [record_of(e) for e in detail["events"]],
        "retrievals": [
            {
                "id": r["retrieval"].pk,
                "kind": r["retrieval"].kind,
                "exposed": r["exposed"],
                "gap": r["gap"],
            }
            for r in detail["retrievals"]
        ],
        "feedback_complete": detail["complete"],
        "memories": [memory_ref(m.pk) for m in detail["memories"]],
        "procedure": detail["procedure"].pk if detail["procedure"] else None,
    }


def retrieval_data(*, retrieval_id: str, filters: ExplainFilters) -> RetrievalDetailOut:
    found = retrieval_get(retrieval_id=retrieval_id)
    if found is None:
        raise NotFound(
            f"no retrieval {retrieval_id}; GET /api/sessions/{{id}} lists a session's retrievals"
        )
    explanation = retrieval_explain(retrieval_id=found.pk, all_items=filters.all)
    detail = retrieval_detail(retrieval=found)
    record = record_of(found)
    record.pop("catalog", None)  # internal paging state, not evidence
    return {
        "retrieval": record,
        "exposures": [
            {
                "target_kind": cast(Any, r["exposure"].target_kind),  # memory | procedure
                "target_id": r["exposure"].target_id,
                "pathway": r["exposure"].pathway,
                "rank": r["exposure"].rank,
                "feedback": r["feedback"],
                "missing": r["missing"],
            }
            for r in detail["rows"]
        ],
        "missing_count": detail["missing_count"],
        "explanation": explanation.as_data(),
    }


def procedures_page(*, filters: ScopeFilters) -> ProceduresOut:
    listing = procedure_list(
        scope=filters.scope, status=filters.status, limit=filters.limit, offset=filters.offset
    )
    return {"procedures": [record_of(p) for p in listing.rows], **_counts(listing, filters)}


def procedure_data(*, procedure_id: str) -> ProcedureRecord:
    found = procedure_get(procedure_id=procedure_id)
    if found is None:
        raise NotFound(f"no procedure {procedure_id}; GET /api/procedures lists them")
    return record_of(found)


def stats_data(*, scope: str | None) -> StatsOut:
    return scope_stats(scope=scope)

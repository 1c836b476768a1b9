"""Read-only inspection over REST: lists, single rows with their evidence, stats, health.

Queries live in memory.selectors; a route here parses its query, calls one or two selectors
and shapes rows into the envelope. Reads never create a Retrieval or Exposure: inspecting
memory is not an agent being shown it.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema
from pydantic import Field

from memory.api.replies import READ, OkOut, ok
from memory.errors import NotFound
from memory.ids import memory_ref
from memory.models import Memory
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
    retrieval_get,
    scope_stats,
    session_detail,
    session_get,
    session_list,
)

PAGE_MAX = 200
OFFSET_MAX = 1_000_000_000  # far past any store; beyond 2**63 SQLite cannot even bind it

router = Router()


class Page(Schema):
    limit: int = Field(50, ge=1, le=PAGE_MAX)
    offset: int = Field(0, ge=0, le=OFFSET_MAX)


class MemoryFilters(Page):
    scope: str | None = None
    status: str | None = None
    type: str | None = None
    q: str | None = Field(None, description="substring of the content (case-insensitive)")


class ScopeFilters(Page):
    scope: str | None = None
    status: str | None = None


def _paged(listing: Listing[Any], page: Page, key: str, row: Any) -> dict[str, Any]:
    items = [row(obj) for obj in listing.rows]
    return ok({key: items, "total": listing.total, "limit": page.limit, "offset": page.offset})


def _memory_row(memory: Memory) -> dict[str, Any]:
    record = record_of(memory)
    record["id"] = memory_ref(memory.pk)
    for fk in ("superseded_by_id", "duplicate_of_id"):
        record[fk] = memory_ref(record[fk]) if record[fk] else None
    return record


@router.get("/memories", response=READ, operation_id="memory_api_memories")
def memories(request: HttpRequest, filters: Query[MemoryFilters]) -> dict[str, Any]:
    listing = memory_list(
        scope=filters.scope,
        status=filters.status,
        memory_type=filters.type,
        q=filters.q,
        limit=filters.limit,
        offset=filters.offset,
    )
    return _paged(listing, filters, "memories", _memory_row)


@router.get("/memories/{memory_id}", response=READ, operation_id="memory_api_memory")
def memory(request: HttpRequest, memory_id: str) -> dict[str, Any]:
    found = memory_get(memory_id=memory_id)
    if found is None:
        raise NotFound(f"no memory {memory_id}; GET /api/memories?q=… finds ids")
    return ok(evidence_as_data(memory_evidence(memory=found)))


@router.get("/sessions", response=READ, operation_id="memory_api_sessions")
def sessions(request: HttpRequest, filters: Query[ScopeFilters]) -> dict[str, Any]:
    listing = session_list(
        scope=filters.scope, status=filters.status, limit=filters.limit, offset=filters.offset
    )
    return _paged(listing, filters, "sessions", record_of)


@router.get("/sessions/{session_id}", response=READ, operation_id="memory_api_session")
def session(request: HttpRequest, session_id: str) -> dict[str, Any]:
    found = session_get(session_id=session_id)
    if found is None:
        raise NotFound(f"no session {session_id}; GET /api/sessions lists them")
    detail = session_detail(session=found)
    return ok(
        {
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
    )


@router.get("/retrievals/{retrieval_id}", response=READ, operation_id="memory_api_retrieval")
def retrieval(request: HttpRequest, retrieval_id: str) -> dict[str, Any]:
    found = retrieval_get(retrieval_id=retrieval_id)
    if found is None:
        raise NotFound(f"no retrieval {retrieval_id}")
    detail = retrieval_detail(retrieval=found)
    record = record_of(found)
    record.pop("catalog", None)  # internal paging state, not evidence
    return ok(
        {
            "retrieval": record,
            "exposures": [
                {
                    "target_kind": r["exposure"].target_kind,
                    "target_id": r["exposure"].target_id,
                    "pathway": r["exposure"].pathway,
                    "rank": r["exposure"].rank,
                    "feedback": r["feedback"],
                    "missing": r["missing"],
                }
                for r in detail["rows"]
            ],
            "missing_count": detail["missing_count"],
        }
    )


@router.get("/procedures", response=READ, operation_id="memory_api_procedures")
def procedures(request: HttpRequest, filters: Query[ScopeFilters]) -> dict[str, Any]:
    listing = procedure_list(
        scope=filters.scope, status=filters.status, limit=filters.limit, offset=filters.offset
    )
    return _paged(listing, filters, "procedures", record_of)


@router.get("/procedures/{procedure_id}", response=READ, operation_id="memory_api_procedure")
def procedure(request: HttpRequest, procedure_id: str) -> dict[str, Any]:
    found = procedure_get(procedure_id=procedure_id)
    if found is None:
        raise NotFound(f"no procedure {procedure_id}; GET /api/procedures lists them")
    return ok(record_of(found))


@router.get("/stats", response=READ, operation_id="memory_api_stats")
def stats(request: HttpRequest, scope: str | None = None) -> dict[str, Any]:
    return ok(scope_stats(scope=scope))


@router.get("/health", auth=None, response={200: OkOut}, operation_id="memory_api_health")
def health(request: HttpRequest) -> dict[str, Any]:
    return ok({"status": "ok"})

"""Read-only inspection over REST: lists, single rows with their evidence, stats, health.

Routes only: each hands its parsed query to a function of memory/api/read_data.py (the
selectors it calls, the rows it shapes) and runs it in the HTTP worker pool the agent verbs
use (memory.http.workers), so a burst of reads queues for a free thread instead of
getting a thread and a database connection each. Reads never create a Retrieval or Exposure:
inspecting memory is not an agent being shown it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.http import HttpRequest
from ninja import Query, Router

from memory.api import read_data
from memory.api.read_data import ExplainFilters, MemoryFilters, ScopeFilters
from memory.api.replies import (
    HEALTH,
    READ,
    HealthReply,
    MemoriesReply,
    MemoryReply,
    Ok,
    ProcedureReply,
    ProceduresReply,
    RetrievalReply,
    SessionReply,
    SessionsReply,
    StatsReply,
    ok,
    reply_doc,
)
from memory.http.workers import run_in_http_worker
from memory.replies.reads import (
    HealthOut,
    MemoriesOut,
    MemoryEvidenceOut,
    ProceduresOut,
    RetrievalDetailOut,
    SessionDetailOut,
    SessionsOut,
    StatsOut,
)
from memory.replies.records import ProcedureRecord
from memory.services.storage import storage_check_in_place

DataT = TypeVar("DataT")

router = Router()


async def _call(answer: Callable[..., DataT], **kwargs: Any) -> Ok[DataT]:
    return ok(await run_in_http_worker(answer, **kwargs))


@router.get(
    "/memories",
    response=READ,
    openapi_extra=reply_doc(MemoriesReply),
    operation_id="memory_api_memories",
)
async def memories(request: HttpRequest, filters: Query[MemoryFilters]) -> Ok[MemoriesOut]:
    return await _call(read_data.memories_page, filters=filters)


@router.get(
    "/memories/{memory_id}",
    response=READ,
    openapi_extra=reply_doc(MemoryReply),
    operation_id="memory_api_memory",
)
async def memory(request: HttpRequest, memory_id: str) -> Ok[MemoryEvidenceOut]:
    return await _call(read_data.memory_data, memory_id=memory_id)


@router.get(
    "/sessions",
    response=READ,
    openapi_extra=reply_doc(SessionsReply),
    operation_id="memory_api_sessions",
)
async def sessions(request: HttpRequest, filters: Query[ScopeFilters]) -> Ok[SessionsOut]:
    return await _call(read_data.sessions_page, filters=filters)


@router.get(
    "/sessions/{session_id}",
    response=READ,
    openapi_extra=reply_doc(SessionReply),
    operation_id="memory_api_session",
)
async def session(request: HttpRequest, session_id: str) -> Ok[SessionDetailOut]:
    return await _call(read_data.session_data, session_id=session_id)


@router.get(
    "/retrievals/{retrieval_id}",
    response=READ,
    openapi_extra=reply_doc(RetrievalReply),
    operation_id="memory_api_retrieval",
)
async def retrieval(
    request: HttpRequest, retrieval_id: str, filters: Query[ExplainFilters]
) -> Ok[RetrievalDetailOut]:
    """The retrieval, what it exposed and the feedback each target got, and `explanation`: why
    each item ranks where it does (every signal's contribution to its score)."""
    return await _call(read_data.retrieval_data, retrieval_id=retrieval_id, filters=filters)


@router.get(
    "/procedures",
    response=READ,
    openapi_extra=reply_doc(ProceduresReply),
    operation_id="memory_api_procedures",
)
async def procedures(request: HttpRequest, filters: Query[ScopeFilters]) -> Ok[ProceduresOut]:
    return await _call(read_data.procedures_page, filters=filters)


@router.get(
    "/procedures/{procedure_id}",
    response=READ,
    openapi_extra=reply_doc(ProcedureReply),
    operation_id="memory_api_procedure",
)
async def procedure(request: HttpRequest, procedure_id: str) -> Ok[ProcedureRecord]:
    return await _call(read_data.procedure_data, procedure_id=procedure_id)


@router.get(
    "/stats",
    response=READ,
    openapi_extra=reply_doc(StatsReply),
    operation_id="memory_api_stats",
)
async def stats(request: HttpRequest, scope: str | None = None) -> Ok[StatsOut]:
    return await _call(read_data.stats_data, scope=scope)


@router.get(
    "/health",
    auth=None,
    response=HEALTH,
    openapi_extra=reply_doc(HealthReply),
    operation_id="memory_api_health",
)
async def health(request: HttpRequest) -> Ok[HealthOut]:
    # Touches no table (one stat of the SQLite file), so it answers on the event loop even
    # while every worker is busy; a store deleted under the server fails it.
    storage_check_in_place()
    return ok({"status": "ok"})

"""Every REST view but health does its work in the HTTP worker pool, not merely its token check.

tests/api/test_http_workers.py shows routes waiting for a free worker under a live server, but
a request there waits at its token check (also pooled) before its view runs, so it cannot tell
whether the view's own work is pooled. Here the pool has one thread, a job of the test holds
it, and each view is awaited directly: none may finish until that thread is free, and then each
must have run (answered, or raised its own error). A sync view, or one that runs its work in a
thread of its own, fails.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from django.test import Client, RequestFactory

from memory.api import reads, staff, verbs
from memory.api.read_data import ExplainFilters, MemoryFilters, ScopeFilters
from memory.errors import SlowaveError
from memory.http.workers import http_workers, run_in_http_worker
from memory.services.tokens import Caller

pytestmark = pytest.mark.django_db(transaction=True)

QUEUED_SECONDS = 0.5

# operationId -> (view, keyword arguments besides the request)
VIEWS: dict[str, tuple[Any, dict[str, Any]]] = {
    "memory_api_activate": (verbs.VIEWS["activate"], {}),
    "memory_api_remember": (verbs.VIEWS["remember"], {}),
    "memory_api_recall": (verbs.VIEWS["recall"], {}),
    "memory_api_feedback": (verbs.VIEWS["feedback"], {}),
    "memory_api_commit": (verbs.VIEWS["commit"], {}),
    "memory_api_memories": (reads.memories, {"filters": MemoryFilters()}),
    "memory_api_memory": (reads.memory, {"memory_id": "sch_1"}),
    "memory_api_sessions": (reads.sessions, {"filters": ScopeFilters()}),
    "memory_api_session": (reads.session, {"session_id": "sess_1"}),
    "memory_api_retrieval": (
        reads.retrieval,
        {"retrieval_id": "rec_1", "filters": ExplainFilters()},
    ),
    "memory_api_procedures": (reads.procedures, {"filters": ScopeFilters()}),
    "memory_api_procedure": (reads.procedure, {"procedure_id": "proc_1"}),
    "memory_api_stats": (reads.stats, {"scope": None}),
    "memory_api_memory_forget": (staff.memory_forget, {"memory_id": "sch_1"}),
    "memory_api_memory_unforget": (staff.memory_unforget, {"memory_id": "sch_1"}),
    "memory_api_procedure_forget": (staff.procedure_forget, {"procedure_id": "proc_1"}),
    "memory_api_procedure_unforget": (staff.procedure_unforget, {"procedure_id": "proc_1"}),
    "memory_api_import_file": (staff.import_file, {}),
}
UNPOOLED = {"memory_api_health"}  # touches nothing; answers even with every worker busy


def _operation_ids() -> set[str]:
    paths = Client().get("/api/openapi.json").json()["paths"]
    return {op["operationId"] for methods in paths.values() for op in methods.values()}


def _request() -> Any:
    request = RequestFactory().post("/api/x", data=b"", content_type="application/json")
    request.auth = Caller(via="token", name="staff", is_staff=True)
    return request


async def _each_view_waits_for_the_worker() -> tuple[dict[str, bool], dict[str, Any]]:
    gate = threading.Event()
    with http_workers():
        holder = asyncio.ensure_future(run_in_http_worker(gate.wait, 30))
        await asyncio.sleep(0.1)  # the holder reaches the only thread first
        calls = {
            name: asyncio.ensure_future(view(_request(), **kwargs))
            for name, (view, kwargs) in VIEWS.items()
        }
        await asyncio.sleep(QUEUED_SECONDS)
        finished_early = {name: call.done() for name, call in calls.items()}
        gate.set()
        await holder
        outcomes = await asyncio.gather(*calls.values(), return_exceptions=True)
    return finished_early, dict(zip(calls, outcomes, strict=True))


def test_it_covers_every_route_of_the_api() -> None:
    assert set(VIEWS) | UNPOOLED == _operation_ids()


def test_it_runs_each_view_in_a_worker_once_one_is_free(settings) -> None:
    settings.SLOWAVE_HTTP_WORKERS = 1
    finished_early, outcomes = asyncio.run(_each_view_waits_for_the_worker())

    assert not any(finished_early.values()), finished_early
    for name, outcome in outcomes.items():
        # Empty bodies and unknown ids: the view's own answer or its own refusal.
        answered = isinstance(outcome, dict) and outcome["ok"] is True
        assert answered or isinstance(outcome, SlowaveError), (name, outcome)

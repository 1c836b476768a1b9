"""Read-only inspection: lists, details and stats, none of which looks like an agent recall."""

from __future__ import annotations

import pytest

from memory.ids import memory_pk
from memory.models import Exposure, Memory, Retrieval
from tests.api.support import err, fresh_scope, ok, seed

pytestmark = pytest.mark.django_db


def test_it_lists_and_shows_memories_without_creating_retrievals(client) -> None:
    scope = fresh_scope()
    memory_id = seed(client, scope, "Deploys are frozen on Fridays")
    seed(client, scope, "The cache TTL is ten minutes")
    retrievals, exposures = Retrieval.objects.count(), Exposure.objects.count()

    listed = ok(client.get("/api/memories", {"scope": scope, "q": "friday", "limit": 5}))
    assert listed["total"] == 1 and listed["memories"][0]["id"] == memory_id
    assert ok(client.get("/api/memories", {"scope": scope, "type": "fact"}))["total"] == 2
    detail = ok(client.get(f"/api/memories/{memory_id}"))
    assert detail["memory"]["id"] == memory_id and detail["memory"]["content"].startswith("Deploys")
    session_id = detail["memory"]["source_session_id"]
    session = ok(client.get(f"/api/sessions/{session_id}"))
    assert memory_id in session["memories"] and session["feedback_complete"]
    retrieval_id = session["retrievals"][0]["id"]
    assert ok(client.get(f"/api/retrievals/{retrieval_id}"))["retrieval"]["id"] == retrieval_id
    assert ok(client.get("/api/sessions", {"scope": scope}))["total"] == 2
    assert ok(client.get("/api/procedures", {"scope": scope}))["total"] == 0
    assert ok(client.get("/api/stats", {"scope": scope}))["memories"] == 2

    assert (Retrieval.objects.count(), Exposure.objects.count()) == (retrievals, exposures)


def test_it_lists_the_most_salient_memories_first_when_asked(client) -> None:
    scope = fresh_scope()
    useful = seed(client, scope, "Deploys are frozen on Fridays")
    seed(client, scope, "The cache TTL is ten minutes")
    Memory.objects.filter(pk=memory_pk(useful)).update(salience=3.0)  # as used feedback raises it
    newest = ok(client.get("/api/memories", {"scope": scope}))["memories"]
    salient = ok(client.get("/api/memories", {"scope": scope, "order": "salience"}))["memories"]
    assert newest[0]["id"] != useful and salient[0]["id"] == useful
    error = err(client.get("/api/memories", {"order": "loudest"}), 400, "invalid_input")
    assert error["field_errors"][0]["path"] == "order"


def test_it_answers_unknown_ids_with_404(client) -> None:
    for path in (
        "memories/sch_999999",
        "sessions/sess_nope",
        "retrievals/rec_nope",
        "procedures/proc_nope",
    ):
        err(client.get(f"/api/{path}"), 404, "not_found")


def test_it_rejects_bad_paging_with_the_invalid_input_envelope(client) -> None:
    error = err(client.get("/api/memories", {"limit": 0}), 400, "invalid_input")
    assert error["field_errors"][0]["path"] == "limit"


def test_it_refuses_an_offset_too_large_for_the_database(client) -> None:
    # Found by schemathesis: a 30-digit offset reached SQLite and came back as a 500.
    for path in ("memories", "sessions", "procedures"):
        error = err(client.get(f"/api/{path}", {"offset": 10**29}), 400, "invalid_input")
        assert error["field_errors"][0]["path"] == "offset"

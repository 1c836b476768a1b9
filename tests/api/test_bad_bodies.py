"""Bodies that used to answer 500: each is invalid_input naming the field, and nothing is written.

Through Django's test client against the real app (middleware, ninja, services, SQLite):
5,000-level nesting on every route that takes a body and inside `/api/import`, NaN and
Infinity in the free-form contexts, an integer of 5,000 digits, an `occurred_at` past year 9999 once in UTC. And a failure
that really is unexpected, whose message sends the operator to the server log, must have put
its traceback there.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from memory.models import Event, Memory, Procedure, Session
from memory.services.tokens import token_create
from tests.api.support import VERIFIED, err, fresh_scope, ok, post, seed

pytestmark = pytest.mark.django_db
DEEP = 5000
REMOTE = {"REMOTE_ADDR": "192.0.2.10"}  # not loopback: the staff routes take the token


def _nested(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def _staff() -> dict[str, str]:
    get_user_model().objects.create_user(username="bodies-staff", password="x", is_staff=True)
    token = token_create(username="bodies-staff", name="bodies", now=timezone.now())[1]
    return {"HTTP_AUTHORIZATION": f"Bearer {token}", **REMOTE}


def _written() -> tuple[int, int, int, int]:
    return (
        Session.objects.count(),
        Event.objects.count(),
        Memory.objects.count(),
        Procedure.objects.count(),
    )


HOLE = "<literal>"


def _with_literal(body: dict[str, Any], literal: str) -> str:
    """`body` as JSON text with `literal` (e.g. NaN, not a JSON value) where HOLE stands."""
    return json.dumps(body).replace(json.dumps(HOLE), literal)


def _open(client: Any, scope: str) -> dict[str, Any]:
    return ok(post(client, "activate", {"task": "t", "initial_goal": "g", "scope": scope}))


def test_it_refuses_5000_level_nesting_on_every_body_route(client) -> None:
    staff = _staff()
    memory_id = seed(client, fresh_scope("deep"), "Deploys are frozen on Fridays")
    routes = [
        ("activate", {}),
        ("remember", {}),
        ("recall", {}),
        ("feedback", {}),
        ("commit", {}),
        (f"memories/{memory_id}/forget", staff),
        (f"memories/{memory_id}/unforget", staff),
        ("procedures/proc_x/forget", staff),
        ("import", staff),
    ]
    before = _written()
    for route, extra in routes:
        whole = err(post(client, route, _nested(), **extra), 400, "invalid_input")
        assert whole["field_errors"] == [
            {"path": "", "message": "the body must nest at most 64 levels deep"}
        ], route
        member = '{"task_context": ' + _nested() + "}"
        named = err(post(client, route, member, **extra), 400, "invalid_input")
        assert named["field_errors"][0]["path"] == "task_context", (route, named)
        assert named["message"] == "task_context must nest at most 64 levels deep"
    assert _written() == before


def test_it_refuses_5000_level_nesting_inside_an_import(client) -> None:
    staff, scope = _staff(), fresh_scope("deep-import")
    line = json.dumps({"session_key": "s", "role": "user", "content": "hello"})
    deep_line = '{"session_key": "s", "role": "user", "content": "x", "metadata": {"a": '
    deep_line += _nested() + "}}"
    before = _written()
    for body in (
        {"scope": scope, "content": f"{line}\n{deep_line}\n"},
        {"format": "export", "content": _nested() + "\n"},
    ):
        error = err(post(client, "import", body, **staff), 400, "invalid_input")
        assert error["field_errors"][0]["path"].startswith(("content", "line")), error
        assert "must nest at most 64 levels deep" in error["message"], error
    assert _written() == before


def test_it_names_the_field_of_a_5000_digit_integer(client) -> None:
    # json.loads refuses to convert it with a bare ValueError: it used to come back as
    # "request body must be a JSON object", of a body that is one.
    scope = fresh_scope("digits")
    opened = _open(client, scope)
    huge = "9" * 5000
    recall = _with_literal(
        {"session_id": opened["session_id"], "scope": scope, "query": "q", "limit": HOLE}, huge
    )
    error = err(post(client, "recall", recall), 400, "invalid_input")
    assert error["field_errors"] == [
        {"path": "limit", "message": "limit must be a number of at most 4300 digits"}
    ], error
    context = _with_literal(
        {"task": "t", "initial_goal": "g", "scope": scope, "task_context": {"n": [HOLE]}},
        "-" + huge,
    )
    error = err(post(client, "activate", context), 400, "invalid_input")
    assert error["message"] == "task_context.n[0] must be a number of at most 4300 digits"


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_it_refuses_non_finite_numbers_in_the_contexts(client, literal: str) -> None:
    scope = fresh_scope("nan")
    before = _written()
    activate = _with_literal(
        {"task": "t", "initial_goal": "g", "scope": scope, "task_context": {"n": [1, HOLE]}},
        literal,
    )
    error = err(post(client, "activate", activate), 400, "invalid_input")
    assert error["field_errors"] == [
        {
            "path": "task_context",
            "message": "task_context.n[1] must be a finite number (not NaN or Infinity)",
        }
    ]
    assert _written() == before

    opened = _open(client, scope)
    recall = _with_literal(
        {
            "session_id": opened["session_id"],
            "scope": scope,
            "query": "q",
            "task_context": {"n": HOLE},
        },
        literal,
    )
    error = err(post(client, "recall", recall), 400, "invalid_input")
    assert error["field_errors"][0]["path"] == "task_context"
    commit: dict[str, Any] = {
        "session_id": opened["session_id"],
        "final_goal": "g",
        "outcome": "success",
        "outcome_summary": "done",
        "verification": VERIFIED,
        "procedure": {"summary": "s", "steps": [{"summary": "a"}], "context": {"n": HOLE}},
    }
    error = err(post(client, "commit", _with_literal(commit, literal)), 400, "invalid_input")
    assert error["field_errors"][0]["path"] == "procedure.context", error
    assert "procedure.context.n must be a finite number" in error["message"]
    session = Session.objects.get(pk=opened["session_id"])
    assert session.status == Session.Status.OPEN and not Procedure.objects.exists()


@pytest.mark.parametrize(
    "stamp", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"], ids=["late", "early"]
)
def test_it_refuses_an_occurred_at_outside_the_utc_years_and_writes_nothing(
    client, stamp: str
) -> None:
    scope = fresh_scope("overflow")
    session_id = _open(client, scope)["session_id"]
    touched = Session.objects.get(pk=session_id).last_activity_at
    events = Event.objects.filter(session_id=session_id).count()
    scalar = {"scope": scope, "session_id": session_id, "content": "c", "type": "fact"}
    error = err(post(client, "remember", {**scalar, "occurred_at": stamp}), 400, "invalid_input")
    assert error["field_errors"] == [
        {"path": "occurred_at", "message": "occurred_at must fall within years 1 to 9999 in UTC"}
    ]
    assert "server log" not in error["message"]
    batch = {
        "scope": scope,
        "session_id": session_id,
        "memories": [
            {"content": "fine", "type": "fact"},
            {"content": "late", "type": "fact", "occurred_at": stamp},
        ],
    }
    error = err(post(client, "remember", batch), 400, "invalid_input")
    assert error["field_errors"][0]["path"] == "memories[1].occurred_at"
    assert Session.objects.get(pk=session_id).last_activity_at == touched
    assert Event.objects.filter(session_id=session_id).count() == events
    assert not Memory.objects.filter(scope=scope).exists()


def test_it_logs_the_traceback_of_an_unexpected_failure_it_reports(client, caplog) -> None:
    # A genuine storage fault, from SQLite itself: a trigger on this connection only.
    scope = fresh_scope("fault")
    session_id = _open(client, scope)["session_id"]
    table = Memory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMP TRIGGER refuse_memories BEFORE INSERT ON main.{table} "
            "BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
        )
    body = {"scope": scope, "session_id": session_id, "content": "c", "type": "fact"}
    caplog.set_level(logging.ERROR)
    try:
        scalar = err(post(client, "remember", body), 500, "internal_error")
        batch = ok(
            post(
                client,
                "remember",
                {
                    "scope": scope,
                    "session_id": session_id,
                    "memories": [{"content": "d", "type": "fact"}],
                },
            )
        )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER temp.refuse_memories")
    assert "server log" in scalar["message"]
    assert "server log" in batch["results"][0]["error"]["message"]
    logged = [
        r.exc_info[1] for r in caplog.records if r.exc_info and "disk says no" in str(r.exc_info[1])
    ]
    assert len(logged) >= 2, [r.getMessage() for r in caplog.records]

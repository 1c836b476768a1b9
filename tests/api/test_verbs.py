"""The five agent verbs over REST: same models, services and envelope as MCP; status mapping."""

from __future__ import annotations

import pytest

from memory.models import Session
from tests.api.support import VERIFIED, err, fresh_scope, ok, post, seed

pytestmark = pytest.mark.django_db
INVOICES = "Invoices are generated on the first day of the month"


def test_it_completes_a_cycle_with_the_five_verbs(client) -> None:
    scope = fresh_scope()
    memory_id = seed(client, scope, INVOICES)
    opened = ok(
        post(
            client,
            "activate",
            {
                "task": "When are invoices generated each month?",
                "initial_goal": "answer billing questions",
                "scope": scope,
            },
        )
    )
    assert [m["memory_id"] for m in opened["memories"]] == [memory_id]
    ok(
        post(
            client,
            "remember",
            {
                "scope": scope,
                "session_id": opened["session_id"],
                "content": "Refunds take five business days",
                "type": "fact",
            },
        )
    )
    recalled = ok(
        post(
            client,
            "recall",
            {
                "scope": scope,
                "session_id": opened["session_id"],
                "query": "how long do refunds take",
            },
        )
    )
    for reply in (opened, recalled):
        ok(
            post(
                client,
                "feedback",
                {
                    "retrieval_id": reply["retrieval_id"],
                    "coverage": "complete",
                    "memory_feedback": [
                        {"memory_id": m["memory_id"], "assessment": "used"}
                        for m in reply["memories"]
                    ],
                    "procedure_feedback": [
                        {"procedure_id": p["procedure_id"], "use": "not_used"}
                        for p in reply.get("procedures", [])
                    ],
                },
            )
        )
    ok(
        post(
            client,
            "commit",
            {
                "session_id": opened["session_id"],
                "final_goal": "answered",
                "outcome": "success",
                "outcome_summary": "done",
                "verification": VERIFIED,
            },
        )
    )
    assert Session.objects.get(pk=opened["session_id"]).status == Session.Status.ENDED


def test_it_answers_bad_json_with_the_invalid_input_envelope(client) -> None:
    error = err(post(client, "activate", "{not json"), 400, "invalid_input")
    assert error["retryable"] is False and error["field_errors"]


def test_it_reports_field_errors_exactly_like_mcp(client) -> None:
    error = err(
        post(
            client, "activate", {"task": "t", "initial_goal": "g", "scope": "nokind", "surprise": 1}
        ),
        400,
        "invalid_input",
    )
    paths = {f["path"] for f in error["field_errors"]}
    assert {"scope", "surprise"} <= paths
    assert "Extra inputs are not permitted" in error["message"]


def test_it_maps_an_unknown_retrieval_to_404(client) -> None:
    error = err(
        post(
            client,
            "feedback",
            {"retrieval_id": "rec_missing", "coverage": "complete", "memory_feedback": []},
        ),
        404,
        "not_found",
    )
    assert "unknown retrieval_id" in error["message"]


def test_it_maps_incomplete_feedback_to_409(client) -> None:
    scope = fresh_scope()
    seed(client, scope, INVOICES)
    opened = ok(
        post(
            client,
            "activate",
            {
                "task": "When are invoices generated each month?",
                "initial_goal": "g",
                "scope": scope,
            },
        )
    )
    assert opened["memories"]
    error = err(
        post(
            client,
            "commit",
            {
                "session_id": opened["session_id"],
                "final_goal": "g",
                "outcome": "success",
                "outcome_summary": "done",
                "verification": VERIFIED,
            },
        ),
        409,
        "incomplete_feedback",
    )
    assert error["retryable"] is True and error["outstanding"]


def test_it_maps_each_error_code_to_one_http_status() -> None:
    from memory.http.status import status_for

    expected = {
        "invalid_input": 400,
        "unauthorized": 401,
        "forbidden": 403,
        "origin_not_allowed": 403,
        "not_found": 404,
        "incomplete_feedback": 409,
        "unsupported_media_type": 415,
        "host_not_allowed": 421,
        "internal_error": 500,
        "storage_busy": 503,
    }
    assert {code: status_for(code) for code in expected} == expected


def test_it_answers_an_oversized_body_with_invalid_input(client, settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = {"task": "x" * 2000, "initial_goal": "g", "scope": "project:big"}
    error = err(post(client, "activate", body), 400, "invalid_input")
    assert "larger than 1000 bytes" in error["message"]

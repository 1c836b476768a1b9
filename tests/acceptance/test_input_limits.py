"""Scenarios 27–29 and every limit of spec §14: exact errors, nothing written, session usable."""

from __future__ import annotations

import pytest

from tests.acceptance.cycle import VERIFIED, activate, commit, err, fresh_scope, ids, ok, remember


@pytest.fixture
def opened(mcp):
    scope = fresh_scope()
    data = activate(mcp, scope, "Exercise input limits")
    data["scope"] = scope
    return data


def _remember(mcp, opened, **args):
    return mcp.call(
        "slowave_remember", {"scope": opened["scope"], "session_id": opened["session_id"], **args}
    )


def _still_usable(mcp, opened):
    stored = remember(mcp, opened["scope"], opened["session_id"], "Limits leave the session usable")
    assert stored["disposition"] == "created"


def test_it_rejects_oversized_batches_and_content_storing_nothing(mcp, opened):
    batch = [{"content": f"fact number {i}", "type": "fact"} for i in range(257)]
    error = err(_remember(mcp, opened, memories=batch))
    assert error["field_errors"][0]["path"] == "memories"
    error = err(_remember(mcp, opened, content="x" * 8001, type="fact"))
    assert error["field_errors"][0]["path"] == "content"
    error = err(
        _remember(
            mcp,
            opened,
            memories=[{"content": "ok", "type": "fact"}, {"content": "y" * 8001, "type": "fact"}],
        )
    )
    assert error["field_errors"][0]["path"] == "memories[1].content"
    recalled = ok(
        mcp.call(
            "slowave_recall",
            {"session_id": opened["session_id"], "scope": opened["scope"], "query": "fact number"},
        )
    )
    assert recalled["memories"] == []
    _still_usable(mcp, opened)


def test_it_matches_the_same_text_and_splits_by_scope(mcp, opened):
    first = remember(mcp, opened["scope"], opened["session_id"], "Builds  use  the ARM runners")
    again = remember(mcp, opened["scope"], opened["session_id"], "builds use the arm RUNNERS ")
    assert again["disposition"] == "matched" and again["memory_id"] == first["memory_id"]
    elsewhere_scope = fresh_scope()
    elsewhere = activate(mcp, elsewhere_scope, "Another project")
    other = remember(mcp, elsewhere_scope, elsewhere["session_id"], "Builds use the ARM runners")
    assert other["disposition"] == "created" and other["memory_id"] != first["memory_id"]


def test_it_rejects_unknown_keys_naming_the_path(mcp, opened):
    error = err(
        mcp.call(
            "slowave_recall",
            {
                "session_id": opened["session_id"],
                "scope": opened["scope"],
                "query": "anything",
                "limit": 5,
            },
        )
    )
    assert [fe["path"] for fe in error["field_errors"]] == ["limit"]
    assert error["field_errors"][0]["message"] == "Extra inputs are not permitted"
    _still_usable(mcp, opened)


SCOPE_MESSAGE = "scope must use nonblank kind:id form"


@pytest.mark.parametrize(
    "scope", ["ab", "project", ":x", "project: ", "p:" + "x" * 199, "pro\tject:x"]
)
def test_it_rejects_malformed_scopes(mcp, scope):
    error = err(mcp.call("slowave_activate", {"task": "t", "initial_goal": "g", "scope": scope}))
    assert error["message"] == SCOPE_MESSAGE


@pytest.mark.parametrize(
    "field,value,path",
    [
        ("task", "", "task"),
        ("task", "x" * 20_001, "task"),
        ("initial_goal", "x" * 2_001, "initial_goal"),
        ("semantic_context", "x" * 4_001, "semantic_context"),
        ("task_context", {"blob": "x" * 17_000}, "task_context"),
        ("task_context", {"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}, "task_context"),
    ],
)
def test_it_bounds_activate_fields(mcp, field, value, path):
    args = {"task": "t", "initial_goal": "g", "scope": fresh_scope(), field: value}
    assert err(mcp.call("slowave_activate", args))["field_errors"][0]["path"] == path


def test_it_checks_session_ids_and_forms(mcp, opened):
    scope, sid = opened["scope"], opened["session_id"]
    assert (
        err(
            mcp.call(
                "slowave_remember",
                {"scope": scope, "session_id": "sess_nope", "content": "x", "type": "fact"},
            )
        )["message"]
        == "unknown session_id: sess_nope"
    )
    both = err(
        _remember(
            mcp, opened, content="x", type="fact", memories=[{"content": "y", "type": "fact"}]
        )
    )
    assert both["message"] == "memories is mutually exclusive with content and type"
    neither = err(_remember(mcp, opened, content="x"))
    assert neither["message"] == "content and type are required when memories is omitted"
    assert (
        err(_remember(mcp, opened, content="x", type="gossip"))["field_errors"][0]["path"] == "type"
    )
    for stamp, phrase in [
        (" ", "nonblank"),
        ("yesterday", "RFC 3339 timestamp"),
        ("2026-01-01T00:00:00", "must include a UTC offset"),
    ]:
        assert (
            phrase
            in err(_remember(mcp, opened, content="x", type="fact", occurred_at=stamp))["message"]
        )
    recall = {"session_id": sid, "scope": scope}
    assert err(mcp.call("slowave_recall", recall))["message"] == (
        "query must be nonblank when continue_from is omitted"
    )
    assert (
        err(mcp.call("slowave_recall", {**recall, "query": "x" * 4001}))["field_errors"][0]["path"]
        == "query"
    )
    assert err(mcp.call("slowave_recall", {**recall, "query": "q", "continue_from": "cur_x"}))[
        "message"
    ] == ("continue_from is mutually exclusive with query, task_context, and full evidence")
    assert err(mcp.call("slowave_recall", {**recall, "continue_from": "cur_x"}))["message"] == (
        "unknown continue_from cursor"
    )
    _still_usable(mcp, opened)


def test_it_checks_feedback_forms_and_bounds(mcp, opened):
    rid = opened["retrieval_id"]
    assert (
        err(mcp.call("slowave_feedback", {"coverage": "complete"}))["message"]
        == "retrieval_id is required"
    )
    mixed = err(
        mcp.call("slowave_feedback", {"retrieval_id": rid, "items": [{"retrieval_id": rid}]})
    )
    assert mixed["message"] == "items is mutually exclusive with scalar feedback fields"
    too_many = [{"retrieval_id": rid}] * 65
    assert (
        err(mcp.call("slowave_feedback", {"items": too_many}))["field_errors"][0]["path"] == "items"
    )
    missing = ["x"] * 33
    assert (
        err(mcp.call("slowave_feedback", {"retrieval_id": rid, "missing": missing}))[
            "field_errors"
        ][0]["path"]
        == "missing"
    )
    long_reason = [{"memory_id": "sch_1", "assessment": "used", "reason": "x" * 2001}]
    error = err(mcp.call("slowave_feedback", {"retrieval_id": rid, "memory_feedback": long_reason}))
    assert error["field_errors"][0]["path"] == "memory_feedback[0].reason"


@pytest.mark.parametrize(
    "change,path",
    [
        ({"final_goal": ""}, "final_goal"),
        ({"outcome": "unknown"}, "outcome"),
        ({"outcome_summary": "x" * 8001}, "outcome_summary"),
        ({"verification": {"status": "verified", "summary": "x" * 4001}}, "verification.summary"),
        ({"verification": {**VERIFIED, "evidence_refs": ["r"] * 33}}, "verification.evidence_refs"),
        ({"procedure": {"summary": "s", "steps": []}}, "procedure.steps"),
        (
            {
                "procedure": {
                    "summary": "s",
                    "steps": [{"summary": "x"}],
                    "deduplication_key": "Bad Key",
                }
            },
            "procedure.deduplication_key",
        ),
        (
            {"procedure": {"summary": "s", "steps": [{"summary": "x"}], "caveats": ["c"] * 33}},
            "procedure.caveats",
        ),
        ({"trajectory": [{"kind": "action", "summary": "x"}] * 33}, "trajectory"),
    ],
)
def test_it_bounds_commit_fields_and_leaves_the_session_open(mcp, opened, change, path):
    assert err(commit(mcp, opened["session_id"], **change))["field_errors"][0]["path"] == path
    _still_usable(mcp, opened)


def test_it_answers_non_objects_and_unknown_fields_with_an_envelope(mcp, opened):
    error = err(mcp.call("slowave_commit", {"session_id": opened["session_id"], "surprise": True}))
    assert any(fe["path"] == "surprise" for fe in error["field_errors"])
    assert (
        ids(
            ok(
                mcp.call(
                    "slowave_recall",
                    {
                        "session_id": opened["session_id"],
                        "scope": opened["scope"],
                        "query": "anything at all",
                    },
                )
            )
        )
        == []
    )

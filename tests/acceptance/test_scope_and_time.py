"""Scenarios 3, 4, 19, 24: strict scope, occurred_at handling."""

from __future__ import annotations

from tests.acceptance.cycle import activate, commit, err, fresh_scope, ids, ok, remember, seeded


def test_it_rejects_a_remember_into_another_scope(mcp):
    alpha, beta = fresh_scope("alpha"), fresh_scope("beta")
    opened = activate(mcp, alpha, "Set up the alpha service")
    wrong = err(
        mcp.call(
            "slowave_remember",
            {
                "scope": beta,
                "session_id": opened["session_id"],
                "content": "Alpha uses port 8080",
                "type": "fact",
            },
        )
    )
    assert wrong["message"] == "session_id and scope do not match"
    stored = remember(mcp, alpha, opened["session_id"], "Alpha service listens on port 8080")
    ok(commit(mcp, opened["session_id"]))
    again = activate(mcp, alpha, "Which port does the alpha service listen on?")
    assert ids(again) == [stored["memory_id"]]


def test_it_requires_an_offset_on_occurred_at(mcp):
    scope = fresh_scope()
    opened = activate(mcp, scope, "Log the outage timeline")
    bad = err(
        mcp.call(
            "slowave_remember",
            {
                "scope": scope,
                "session_id": opened["session_id"],
                "content": "Outage began",
                "type": "fact",
                "occurred_at": "2026-08-19T14:05:00",
            },
        )
    )
    assert "UTC offset" in bad["message"]
    stored = remember(
        mcp,
        scope,
        opened["session_id"],
        "The payment outage began at the primary database",
        occurred_at="2026-08-19T14:05:00Z",
    )
    ok(commit(mcp, opened["session_id"]))
    again = activate(mcp, scope, "When did the payment outage begin at the primary database?")
    assert ids(again) == [stored["memory_id"]]


def test_it_never_leaks_a_decision_across_scopes(mcp):
    alpha, beta = fresh_scope("alpha"), fresh_scope("beta")
    seeded(mcp, beta, ["We decided to deploy the API on Fridays only"], "decision")
    seeded(mcp, alpha, ["Alpha builds run on the shared CI runners"])
    opened = activate(mcp, alpha, "When do we deploy the API?")
    recalled = ok(
        mcp.call(
            "slowave_recall",
            {
                "session_id": opened["session_id"],
                "scope": alpha,
                "query": "We decided to deploy the API on Fridays only",
            },
        )
    )
    shown = [m["content"] for m in opened["memories"] + recalled["memories"]]
    assert all("Fridays" not in text for text in shown)


def test_it_shows_occurred_at_as_event_evidence(mcp):
    scope = fresh_scope()
    opened = activate(mcp, scope, "Record the certificate rotation")
    remember(
        mcp,
        scope,
        opened["session_id"],
        "The TLS certificate was rotated on the edge proxy",
        occurred_at="2026-08-19T14:05:00Z",
    )
    recalled = ok(
        mcp.call(
            "slowave_recall",
            {
                "session_id": opened["session_id"],
                "scope": scope,
                "query": "When was the TLS certificate rotated?",
                "evidence": "full",
            },
        )
    )
    events = [e for e in recalled["evidence"] if e["source_kind"] == "event"]
    assert events, recalled
    assert events[0]["occurred_at"] == 1787148300
    assert events[0]["recorded_at"] != events[0]["occurred_at"]
    assert "TLS certificate" in events[0]["content"]

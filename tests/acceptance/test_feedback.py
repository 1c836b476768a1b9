"""Scenarios 6, 7, 8, 21, 22, 23, 20: fail-closed feedback, supersession, read-only recall."""

from __future__ import annotations

from tests.acceptance.cycle import (
    activate,
    commit,
    err,
    fresh_scope,
    full_feedback,
    ids,
    ok,
    seeded,
)


def _feedback(mcp, retrieval_id: str, *entries: dict) -> dict:
    return ok(
        mcp.call(
            "slowave_feedback", {"retrieval_id": retrieval_id, "memory_feedback": list(entries)}
        )
    )


def test_it_rejects_feedback_on_a_memory_never_shown(mcp):
    scope = fresh_scope()
    seeded(mcp, scope, ["The staging cluster runs in eu-west-1"])
    opened = activate(mcp, scope, "Where does the staging cluster run?")
    data = _feedback(mcp, opened["retrieval_id"], {"memory_id": "sch_999999", "assessment": "used"})
    assert data["rejected"] == [{"target_id": "sch_999999", "reason": "target_not_exposed"}]
    assert data["applied"] == {"reinforced": 0, "weakened": 0, "marked_stale": 0, "unchanged": 0}


def test_it_rejects_an_unknown_assessment(mcp):
    scope = fresh_scope()
    (fact,) = seeded(mcp, scope, ["The staging cluster runs in eu-west-1"])
    opened = activate(mcp, scope, "Where does the staging cluster run?")
    data = _feedback(mcp, opened["retrieval_id"], {"memory_id": fact, "assessment": "wrong"})
    assert data["rejected"] == [{"target_id": fact, "reason": "invalid_memory_assessment"}]
    assert data["applied"]["reinforced"] == 0


def test_it_answers_not_found_for_an_unknown_retrieval(mcp):
    error = err(
        mcp.call("slowave_feedback", {"retrieval_id": "rec_000000000000", "coverage": "complete"}),
        "not_found",
    )
    assert error["message"] == "unknown retrieval_id: rec_000000000000"


def test_it_checks_replacements_of_superseded_memories(mcp):
    alpha, beta = fresh_scope("alpha"), fresh_scope("beta")
    (other,) = seeded(mcp, beta, ["Beta service timeout is 30 seconds"])
    old, new = seeded(
        mcp, alpha, ["The request timeout is 10 seconds", "The request timeout is 45 seconds"]
    )
    opened = activate(mcp, alpha, "What is the request timeout?")
    base = {
        "memory_id": old,
        "assessment": "stale",
        "stale_reason": "superseded",
        "reason": "changed",
    }
    data = _feedback(
        mcp,
        opened["retrieval_id"],
        base,
        {**base, "replacement_memory_id": other},
        {**base, "replacement_memory_id": old},
    )
    assert [r["reason"] for r in data["rejected"]] == [
        "superseded_requires_replacement_memory_id",
        "replacement_scope_mismatch",
        "replacement_matches_retired_memory",
    ]
    assert new in ids(opened)


def test_it_keeps_a_superseded_memory_only_as_history_after_its_replacement(mcp):
    scope = fresh_scope()
    old, new = seeded(
        mcp,
        scope,
        ["Deployments go out on Tuesdays", "Deployments go out on Thursdays"],
        "decision",
    )
    opened = activate(mcp, scope, "Which day do deployments go out?")
    assert set(ids(opened)) >= {old, new}
    entries = [
        {
            "memory_id": old,
            "assessment": "stale",
            "stale_reason": "superseded",
            "reason": "moved to Thursdays",
            "replacement_memory_id": new,
        }
    ]
    entries += [{"memory_id": m, "assessment": "used"} for m in ids(opened) if m != old]
    ok(
        mcp.call(
            "slowave_feedback",
            {
                "retrieval_id": opened["retrieval_id"],
                "memory_feedback": entries,
                "coverage": "complete",
            },
        )
    )
    ok(commit(mcp, opened["session_id"]))
    later = activate(mcp, scope, "Which day do deployments go out?")
    order = ids(later)
    assert order.index(old) == order.index(new) + 1
    by_id = {m["memory_id"]: m for m in later["memories"]}
    assert by_id[new]["currency"] == "current"
    assert by_id[old]["currency"] == "historical"
    assert by_id[old]["provenance"]["superseded_by"] == new


def test_it_leaves_memory_untouched_by_repeated_recall(mcp):
    scope = fresh_scope()
    seeded(mcp, scope, ["Cache entries live for five minutes", "The cache is Redis 7"])
    opened = activate(mcp, scope, "Tune the cache")
    query = {
        "session_id": opened["session_id"],
        "scope": scope,
        "query": "How long do cache entries live?",
    }
    replies = [ok(mcp.call("slowave_recall", query)) for _ in range(3)]
    assert ids(replies[0]) == ids(replies[1]) == ids(replies[2])
    assert replies[0]["memories"] == replies[2]["memories"]


def test_it_still_returns_a_memory_marked_irrelevant(mcp):
    scope = fresh_scope()
    (fact,) = seeded(mcp, scope, ["The mobile app is built with React Native"])
    opened = activate(mcp, scope, "Which framework builds the mobile app?")
    assert ids(opened) == [fact]
    full_feedback(mcp, opened, assessment="irrelevant")
    ok(commit(mcp, opened["session_id"]))
    assert ids(activate(mcp, scope, "Which framework builds the mobile app?")) == [fact]

"""Scenarios 13 and 15: continuity, cold start, hostile query text, fresh sessions."""

from __future__ import annotations

from tests.acceptance.cycle import activate, commit, err, fresh_scope, ids, ok, remember


def test_it_continues_and_validates_continuity_ids(mcp):
    scope = fresh_scope()
    first = activate(mcp, scope, "Start the migration work")
    assert first["continuity_state"] == "started" and first["continuity_id"].startswith("cont_")
    again = activate(
        mcp, scope, "Continue the migration work", continuity_id=first["continuity_id"]
    )
    assert again["continuity_state"] == "continued"
    assert again["continuity_id"] == first["continuity_id"]
    assert again["session_id"] != first["session_id"]
    args = {"task": "t", "initial_goal": "g", "scope": scope}
    assert err(mcp.call("slowave_activate", {**args, "continuity_id": "cont_" + "a" * 43}))[
        "message"
    ] == ("continuity_id is unknown")
    assert (
        "nonblank" in err(mcp.call("slowave_activate", {**args, "continuity_id": " "}))["message"]
    )
    other = err(
        mcp.call(
            "slowave_activate",
            {**args, "scope": fresh_scope(), "continuity_id": first["continuity_id"]},
        )
    )
    assert "scope" in other["message"]


def test_it_starts_cold_then_returns_the_first_memory(mcp):
    scope = fresh_scope()
    cold = activate(mcp, scope, "Document the build")
    assert cold["memory_state"] == "cold_start"
    assert [w["code"] for w in cold["warnings"]] == ["cold_start"]
    stored = remember(mcp, scope, cold["session_id"], "The build uses Bazel with remote caching")
    ok(commit(mcp, cold["session_id"]))
    warm = activate(mcp, scope, "How does the build work? Bazel remote caching")
    assert warm["memory_state"] == "available"
    assert ids(warm) == [stored["memory_id"]]
    hostile = ok(
        mcp.call(
            "slowave_recall",
            {"session_id": warm["session_id"], "scope": scope, "query": 'C++ && (NOT) OR * "x'},
        )
    )
    assert "retrieval_id" in hostile
    one, two = activate(mcp, scope, "same task"), activate(mcp, scope, "same task")
    assert one["session_id"] != two["session_id"]

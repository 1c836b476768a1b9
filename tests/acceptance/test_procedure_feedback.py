"""Feedback shapes procedure order (issue 15): a procedure that harmed stops leading one that
helped, over stdio against a real `mcp_serve`."""

from __future__ import annotations

from tests.acceptance.cycle import activate, commit, fresh_scope, full_feedback, ok

TASK = "Fix the Android build after a dependency upgrade"


def _commit_procedure(mcp, scope: str, goal: str, summary: str, step: str) -> str:
    opened = activate(mcp, scope, goal)
    if opened["memories"] or opened["procedures"]:
        full_feedback(mcp, opened, assessment="irrelevant")
    ok(
        commit(
            mcp,
            opened["session_id"],
            procedure={"goal": goal, "summary": summary, "steps": [{"summary": step}]},
        )
    )
    return f"proc_{opened['session_id']}"


def _order(mcp, scope: str) -> tuple[dict, list[str]]:
    shown = activate(mcp, scope, TASK)
    return shown, [p["procedure_id"] for p in shown["procedures"]]


def test_a_procedure_that_harmed_no_longer_leads_one_that_helped(mcp):
    scope = fresh_scope()
    harmful = _commit_procedure(
        mcp,
        scope,
        TASK,
        "Fix the Android build after a dependency upgrade by clearing the Gradle cache",
        "delete ~/.gradle/caches and rebuild",
    )
    helpful = _commit_procedure(
        mcp,
        scope,
        TASK,
        "Fix the Android build after a dependency upgrade by updating the Gradle wrapper",
        "update the Gradle wrapper to the version the upgrade expects",
    )
    shown, before = _order(mcp, scope)
    # The slightly closer wording leads while nothing is known of either.
    assert before[:2] == [harmful, helpful], before
    ok(
        mcp.call(
            "slowave_feedback",
            {
                "retrieval_id": shown["retrieval_id"],
                "memory_feedback": [
                    {"memory_id": m["memory_id"], "assessment": "irrelevant"}
                    for m in shown["memories"]
                ],
                "procedure_feedback": [
                    {
                        "procedure_id": harmful,
                        "use": "used",
                        "effect": "harmed",
                        "contribution": "clearing the cache broke the build further",
                    },
                    {
                        "procedure_id": helpful,
                        "use": "used",
                        "effect": "helped",
                        "contribution": "pinning the plugin fixed it",
                    },
                ],
                "coverage": "complete",
            },
        )
    )
    ok(commit(mcp, shown["session_id"]))
    _, after = _order(mcp, scope)
    assert after[:2] == [helpful, harmful], after

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


def _use(mcp, shown: dict, procedure_id: str, effect: str) -> None:
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
                        "procedure_id": p["procedure_id"],
                        "use": "used" if p["procedure_id"] == procedure_id else "not_used",
                        **({"effect": effect} if p["procedure_id"] == procedure_id else {}),
                        **(
                            {"contribution": "followed its steps"}
                            if p["procedure_id"] == procedure_id
                            else {}
                        ),
                    }
                    for p in shown["procedures"]
                ],
                "coverage": "complete",
            },
        )
    )
    ok(commit(mcp, shown["session_id"]))


def test_activate_shows_a_procedures_track_record_beside_its_outcome(mcp):
    # Issue 28: twice marked harmed, a procedure was still previewed as a plain "success".
    scope = fresh_scope()
    procedure_id = _commit_procedure(
        mcp,
        scope,
        TASK,
        "Fix the Android build after a dependency upgrade by clearing the Gradle cache",
        "delete ~/.gradle/caches and rebuild",
    )
    shown = activate(mcp, scope, TASK)
    [preview] = [p for p in shown["procedures"] if p["procedure_id"] == procedure_id]
    assert preview["track_record"] == {
        "helped": 0,
        "no_effect": 0,
        "harmed": 0,
        "harm_dominates": False,
    }
    _use(mcp, shown, procedure_id, "harmed")
    _use(mcp, activate(mcp, scope, TASK), procedure_id, "harmed")
    shown = activate(mcp, scope, TASK)
    [preview] = [p for p in shown["procedures"] if p["procedure_id"] == procedure_id]
    assert preview["outcome"] == "success"  # how the task that taught it went, still
    assert preview["track_record"] == {
        "helped": 0,
        "no_effect": 0,
        "harmed": 2,
        "harm_dominates": True,
    }
    assert preview["caveats"][0].startswith("Later uses marked this procedure harmed")

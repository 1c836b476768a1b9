"""Scenarios 1, 2, 5, 34: commit preflight, procedures, episodes at commit."""

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


def test_it_rejects_string_steps_with_one_field_error_then_commits(mcp):
    scope = fresh_scope()
    seeded(mcp, scope, ["The deploy script lives in tools/deploy.sh"])
    opened = activate(mcp, scope, "Update the deploy script location notes")
    bad = err(commit(mcp, opened["session_id"], procedure={"summary": "deploy", "steps": ["text"]}))
    assert [fe["path"] for fe in bad["field_errors"]] == ["procedure.steps[0]"]
    assert bad["field_errors"][0]["message"] == (
        "Input should be a valid dictionary or instance of CommitProcedureStep"
    )
    full_feedback(mcp, opened)
    done = ok(
        commit(
            mcp,
            opened["session_id"],
            procedure={"summary": "deploy", "steps": [{"summary": "run it"}]},
        )
    )
    assert done["committed"] is True and done["operation"] == "closed"


def _commit_with_key(mcp, scope: str, summary: str) -> str:
    opened = activate(mcp, scope, "Repair the checkout flow after a failed payment")
    if opened["memories"] or opened["procedures"]:
        full_feedback(mcp, opened)
    ok(
        commit(
            mcp,
            opened["session_id"],
            procedure={
                "summary": summary,
                "steps": [{"summary": "restart the payment worker"}],
                "deduplication_key": "checkout_repair",
            },
        )
    )
    return f"proc_{opened['session_id']}"


def test_it_supersedes_a_procedure_with_the_same_deduplication_key(mcp):
    scope = fresh_scope()
    first = _commit_with_key(mcp, scope, "Repair checkout by restarting the payment worker")
    second = _commit_with_key(
        mcp, scope, "Repair checkout by restarting the payment worker and clearing the queue"
    )
    shown = activate(mcp, scope, "Repair the checkout flow after a failed payment")
    procedure_ids = [p["procedure_id"] for p in shown["procedures"]]
    assert second in procedure_ids and first not in procedure_ids


def test_it_refuses_commit_until_feedback_is_complete(mcp):
    scope = fresh_scope()
    (decision,) = seeded(
        mcp, scope, ["We decided to use PostgreSQL for the billing service"], "decision"
    )
    opened = activate(mcp, scope, "Which database does the billing service use?")
    assert ids(opened) == [decision]
    partial = ok(
        mcp.call(
            "slowave_feedback",
            {
                "retrieval_id": opened["retrieval_id"],
                "memory_feedback": [{"memory_id": decision, "assessment": "used"}],
            },
        )
    )
    assert partial["rejected"] == []
    refused = err(commit(mcp, opened["session_id"]), "incomplete_feedback")
    assert refused["retryable"] is True and refused["message"] == "feedback is incomplete"
    assert refused["outstanding"] == [
        {
            "retrieval_id": opened["retrieval_id"],
            "memory_ids": [],
            "procedure_ids": [],
            "coverage_declared_complete": False,
        }
    ]
    full_feedback(mcp, opened)
    assert ok(commit(mcp, opened["session_id"]))["committed"] is True


def test_it_forms_episodes_at_commit_and_updates_on_second_commit(mcp):
    scope = fresh_scope()
    opened = activate(mcp, scope, "Record the release checklist")
    ok(
        mcp.call(
            "slowave_remember",
            {
                "scope": scope,
                "session_id": opened["session_id"],
                "content": "Releases need a signed changelog",
                "type": "constraint",
            },
        )
    )
    first = ok(commit(mcp, opened["session_id"]))
    assert first["episodes_formed"] >= 2
    again = ok(commit(mcp, opened["session_id"], outcome="partial"))
    assert again["operation"] == "updated" and again["already_ended"] is True
    assert again["episodes_formed"] == 0

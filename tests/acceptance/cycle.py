"""Small helpers for acceptance scenarios: a fresh scope per test, and one-line tool calls."""

from __future__ import annotations

from typing import Any

from tests import factories
from tests.factories import VERIFIED


def fresh_scope(name: str = "alpha", kind: str = "project") -> str:
    return factories.fresh_scope(name, kind)


def ok(envelope: dict[str, Any]) -> dict[str, Any]:
    assert envelope["ok"] is True, envelope
    return envelope["data"]


def err(envelope: dict[str, Any], code: str = "invalid_input") -> dict[str, Any]:
    assert envelope["ok"] is False, envelope
    assert envelope["error"]["code"] == code, envelope
    return envelope["error"]


def activate(
    mcp, scope: str, task: str, goal: str = "finish the task", **extra: Any
) -> dict[str, Any]:
    return ok(
        mcp.call("slowave_activate", {"task": task, "initial_goal": goal, "scope": scope, **extra})
    )


def remember(
    mcp, scope: str, session_id: str, content: str, type_: str = "fact", **extra: Any
) -> dict[str, Any]:
    return ok(
        mcp.call(
            "slowave_remember",
            {"scope": scope, "session_id": session_id, "content": content, "type": type_, **extra},
        )
    )


def remember_many(
    mcp, scope: str, session_id: str, contents: list[str], type_: str = "fact"
) -> list[str]:
    data = ok(
        mcp.call(
            "slowave_remember",
            {
                "scope": scope,
                "session_id": session_id,
                "memories": [{"content": c, "type": type_} for c in contents],
            },
        )
    )
    assert all(r["ok"] for r in data["results"]), data
    return [r["data"]["memory_id"] for r in data["results"]]


def ids(reply: dict[str, Any], pathway: str | None = "direct") -> list[str]:
    return [m["memory_id"] for m in reply["memories"] if pathway is None or m["pathway"] == pathway]


def full_feedback(
    mcp, reply: dict[str, Any], assessment: str = "used", **entry: Any
) -> dict[str, Any]:
    memory_feedback = [
        {"memory_id": m["memory_id"], "assessment": assessment, **entry} for m in reply["memories"]
    ]
    procedure_feedback = [
        {"procedure_id": p["procedure_id"], "use": "not_used"} for p in reply.get("procedures", [])
    ]
    data = ok(
        mcp.call(
            "slowave_feedback",
            {
                "retrieval_id": reply["retrieval_id"],
                "memory_feedback": memory_feedback,
                "procedure_feedback": procedure_feedback,
                "coverage": "complete",
            },
        )
    )
    assert data["rejected"] == [], data
    return data


def commit(mcp, session_id: str, outcome: str = "success", **extra: Any) -> dict[str, Any]:
    return mcp.call(
        "slowave_commit",
        {
            "session_id": session_id,
            "final_goal": "finish the task",
            "outcome": outcome,
            "outcome_summary": "done",
            "verification": VERIFIED,
            **extra,
        },
    )


def seeded(mcp, scope: str, contents: list[str], type_: str = "fact") -> list[str]:
    """Store memories in a throwaway session that is then committed cleanly."""
    opened = activate(mcp, scope, "seed the scope with known facts")
    stored = remember_many(mcp, scope, opened["session_id"], contents, type_)
    if opened["memories"] or opened["procedures"]:
        full_feedback(mcp, opened, assessment="irrelevant")
    ok(commit(mcp, opened["session_id"]))
    return stored

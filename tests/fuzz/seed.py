"""Real ids to fuzz against, made through whichever surface is under test.

Two scopes: in the first a committed session with memories (more than a page of them match
one query) and a procedure, and an open session whose activation and recalls showed them,
one with a cursor to the next page; in the second an open session with a memory
of its own, so calls can mix ids across scopes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.fuzz.bodies import VERIFIED, Target
from tests.fuzz.values import Pool

Call = Callable[[str, dict[str, Any]], dict[str, Any]]  # tool, arguments -> ok data
SCOPE, OTHER_SCOPE = "project:fuzz-a", "project:fuzz-b"
CHECKLIST = "deploy checklist for the checkout service"
FACTS = (
    "Deploys to production are frozen on Fridays",
    "The checkout service retries a payment three times",
    "Release notes live in docs/CHANGES.md",
)


def seed_pool(call: Call) -> Pool:
    pool = Pool(scope=SCOPE, other_scope=OTHER_SCOPE)

    def run(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        data = call(tool, arguments)
        pool.learn(tool, arguments, data)
        return data

    first = run("slowave_activate", {"task": "seed", "initial_goal": "seed", "scope": SCOPE})
    memories = [{"content": fact, "type": "fact"} for fact in FACTS]
    # More than a page of matches for CHECKLIST, so recalls of it return a cursor.
    memories += [
        {"content": f"{CHECKLIST} item {i}: smoke test service {i}", "type": "instruction"}
        for i in range(30)
    ]
    stored = run(
        "slowave_remember",
        {"scope": SCOPE, "session_id": first["session_id"], "memories": memories},
    )
    for result in stored["results"]:
        pool.memories[result["data"]["memory_id"]] = SCOPE
    run("slowave_feedback", {"retrieval_id": first["retrieval_id"], "coverage": "complete"})
    run(
        "slowave_commit",
        {
            "session_id": first["session_id"],
            "final_goal": "seeded",
            "outcome": "success",
            "outcome_summary": "seeded the fuzz store",
            "verification": VERIFIED,
            "procedure": {"summary": "Seed a store", "steps": [{"summary": "remember facts"}]},
        },
    )
    pool.procedures[f"proc_{first['session_id']}"] = SCOPE
    second = run(
        "slowave_activate",
        {"task": "when are deploys frozen", "initial_goal": "know", "scope": SCOPE},
    )
    for query in ("checkout payment retries", CHECKLIST):
        run("slowave_recall", {"scope": SCOPE, "session_id": second["session_id"], "query": query})
    other = run("slowave_activate", {"task": "other", "initial_goal": "o", "scope": OTHER_SCOPE})
    mine = run(
        "slowave_remember",
        {
            "scope": OTHER_SCOPE,
            "session_id": other["session_id"],
            "content": "Scope b has a secret of its own",
            "type": "fact",
        },
    )
    pool.memories[mine["memory_id"]] = OTHER_SCOPE
    assert pool.cursors, "no recall returned a cursor: page two goes unfuzzed"
    return pool


def sweep_target(call: Call, pool: Pool) -> Target:
    """A fresh open session in the first scope, and a recall in it that shows memories."""
    opened = call("slowave_activate", {"task": "sweep", "initial_goal": "g", "scope": SCOPE})
    pool.learn("slowave_activate", {"scope": SCOPE}, opened)
    arguments = {"scope": SCOPE, "session_id": opened["session_id"], "query": CHECKLIST}
    recalled = call("slowave_recall", arguments)
    pool.learn("slowave_recall", arguments, recalled)
    shown = [memory["memory_id"] for memory in recalled["memories"]]
    assert len(shown) >= 2 and recalled.get("continue_from"), recalled
    return Target(
        session=opened["session_id"],
        scope=SCOPE,
        continuity=opened["continuity_id"],
        retrieval=recalled["retrieval_id"],
        memories=(shown[0], shown[1]),
        cursor=recalled["continue_from"],
        procedure=sorted(pool.procedures)[0],
    )

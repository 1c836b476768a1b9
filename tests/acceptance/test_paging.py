"""Scenarios 9, 10, 11, 12, 26: pages, cursors, exposure ledger, working-set size."""

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

SERVICES = [
    "billing",
    "search",
    "checkout",
    "inventory",
    "shipping",
    "accounts",
    "reports",
    "pricing",
]
PARTS = ["queue", "cache", "database", "worker", "gateway"]


def _related_facts(n: int) -> list[str]:
    return [
        f"The {SERVICES[i % 8]} service {PARTS[i % 5]} retries failed requests {i + 2} times"
        for i in range(n)
    ]


def _pages(mcp, scope: str, first: dict) -> list[dict]:
    pages = [first]
    while pages[-1]["more_available"]:
        pages.append(
            ok(
                mcp.call(
                    "slowave_recall",
                    {
                        "session_id": first["session_id"],
                        "scope": scope,
                        "continue_from": pages[-1]["continue_from"],
                    },
                )
            )
        )
        pages[-1]["session_id"] = first["session_id"]
    return pages


def test_it_pages_recall_with_replayable_cursors(mcp):
    scope = fresh_scope()
    stored = seeded(mcp, scope, _related_facts(40))
    opened = activate(mcp, scope, "Review retry settings")
    first = ok(
        mcp.call(
            "slowave_recall",
            {
                "session_id": opened["session_id"],
                "scope": scope,
                "query": "How many times do services retry failed requests?",
            },
        )
    )
    first["session_id"] = opened["session_id"]
    assert 5 < len(first["memories"]) < 40
    assert first["continue_from"].startswith("cur_")
    assert set(first["accessible_field"]) == {"extra_candidates", "kinds", "approx_extra_tokens"}
    replay_args = {
        "session_id": opened["session_id"],
        "scope": scope,
        "continue_from": first["continue_from"],
    }
    assert ok(mcp.call("slowave_recall", replay_args)) == ok(
        mcp.call("slowave_recall", replay_args)
    )
    pages = _pages(mcp, scope, first)
    seen = [m for page in pages for m in ids(page)]
    assert len(seen) == len(set(seen)) == 40 and set(seen) == set(stored)
    assert pages[-1]["accessible_field"] == {}
    other = err(mcp.call("slowave_recall", {**replay_args, "scope": fresh_scope()}))
    assert "does not match" in other["message"]


def test_it_truncates_a_hundred_facet_task_and_pages_without_new_exposures(mcp):
    scope = fresh_scope()
    facts = [
        f"Component {i} of the pipeline is owned by team {chr(65 + i % 26)}{i}" for i in range(100)
    ]
    seeded(mcp, scope, facts)
    task = "\n".join(f"Who owns component {i} of the pipeline?" for i in range(100))
    opened = activate(mcp, scope, task)
    assert opened["relevant_total"] == 100
    assert opened["catalog_truncated"] is True
    assert 10 < len(opened["memories"]) < 100
    opened["session_id"] = opened["session_id"]
    cursor = {
        "session_id": opened["session_id"],
        "scope": scope,
        "continue_from": opened["continue_from"],
    }
    ok(mcp.call("slowave_recall", cursor))
    feedback = ok(
        mcp.call(
            "slowave_feedback", {"retrieval_id": opened["retrieval_id"], "coverage": "partial"}
        )
    )
    before = len(feedback["outstanding"]["memory_ids"])
    ok(mcp.call("slowave_recall", cursor))
    after = ok(
        mcp.call(
            "slowave_feedback", {"retrieval_id": opened["retrieval_id"], "coverage": "partial"}
        )
    )
    assert len(after["outstanding"]["memory_ids"]) == before
    pages = _pages(mcp, scope, opened)
    seen = [m for page in pages for m in ids(page)]
    assert len(set(seen)) == 100


def test_it_shows_twelve_marked_facts_on_one_page(mcp):
    scope = fresh_scope()
    markers = [
        f"Marker {w} means the {w} feature flag is enabled"
        for w in [
            "red",
            "blue",
            "green",
            "amber",
            "violet",
            "cyan",
            "olive",
            "coral",
            "ivory",
            "teal",
            "plum",
            "sand",
        ]
    ]
    stored = seeded(mcp, scope, markers)
    task = "\n".join(f"- What does marker {m.split()[1]} mean?" for m in markers)
    opened = activate(mcp, scope, task)
    assert set(ids(opened)) == set(stored)
    assert "continue_from" not in opened and opened["more_available"] is False
    full_feedback(mcp, opened)


def test_it_merges_and_persists_task_context(mcp):
    scope = fresh_scope()
    seeded(mcp, scope, ["The search index is rebuilt nightly"])
    opened = activate(
        mcp, scope, "Speed up the search index", task_context={"repo": "search", "branch": "main"}
    )
    recalled = ok(
        mcp.call(
            "slowave_recall",
            {
                "session_id": opened["session_id"],
                "scope": scope,
                "query": "When is the search index rebuilt?",
                "task_context": {"branch": "perf", "ticket": 42},
            },
        )
    )
    for reply in (opened, recalled):
        if reply["memories"] or reply["procedures"]:
            full_feedback(mcp, reply)
    assert ok(commit(mcp, opened["session_id"]))["committed"] is True


def test_it_returns_exactly_the_constraints_for_the_task(mcp):
    noise = "The office coffee machine is on the third floor"
    constraints = [
        "New API endpoints must validate request bodies against a JSON schema",
        "API endpoints must require an authentication token",
        "API endpoints must return errors with a machine readable code",
        "API endpoint responses must be paginated beyond 100 items",
        "API endpoints must be versioned under /v1",
        "API endpoints must log every request with a trace id",
        "API endpoints must respond within 200 ms at the 95th percentile",
    ]
    for count in (0, 2, 4, 7):
        scope = fresh_scope()
        stored = seeded(mcp, scope, constraints[:count], "constraint") if count else []
        seeded(mcp, scope, [noise])
        opened = activate(
            mcp,
            scope,
            "Design a new API endpoint for the orders service",
            semantic_context="API design constraints",
        )
        assert set(ids(opened)) == set(stored), (count, opened["memories"])
        assert opened["relevant_total"] == count

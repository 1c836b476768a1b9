"""Scenarios 16, 17, 18, 25 [model]: paraphrase, facets, hard negatives, temporal cues."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.acceptance.cycle import activate, commit, fresh_scope, ids, ok, seeded


def test_it_finds_a_paraphrased_fact_and_not_the_distractor(mcp):
    scope = fresh_scope()
    target, reviewers = seeded(
        mcp,
        scope,
        [
            "Access tokens expire after 15 minutes; refresh tokens last 30 days",
            "Every pull request needs two reviewers before merge",
        ],
    )
    (distractor,) = seeded(mcp, scope, ["Session cookies are named sid and are HTTP only"])
    opened = activate(
        mcp, scope, "How long is a login credential valid before the user must sign in again?"
    )
    shown = ids(opened)
    assert target in shown and reviewers not in shown
    if distractor in shown:
        assert shown.index(target) < shown.index(distractor)


def test_it_answers_each_facet_of_a_numbered_task(mcp):
    scope = fresh_scope()
    port, db, owner, _noise = seeded(
        mcp,
        scope,
        [
            "The web server listens on port 8443",
            "Customer data is stored in PostgreSQL 16",
            "The on-call owner for payments is Dana",
            "The marketing site uses a purple colour palette",
        ],
    )
    opened = activate(
        mcp,
        scope,
        "Prepare the payments runbook:\n1. Which port does the web server listen on?\n"
        "2. Which database stores customer data?\n3. Who is the on-call owner for payments?",
    )
    assert set(ids(opened)) == {port, db, owner}
    assert opened["catalog_truncated"] is False and "continue_from" not in opened


def test_it_returns_nothing_for_a_hard_negative(mcp):
    scope = fresh_scope()
    seeded(
        mcp,
        scope,
        [
            "The API gateway is written in Go",
            "Unit tests run with pytest in CI",
            "The frontend uses TypeScript and React",
            "Releases are tagged with semantic versions",
        ],
    )
    opened = activate(mcp, scope, "Choose a paint colour for the office lobby walls")
    assert opened["memories"] == [] and opened["relevant_total"] == 0
    assert "continue_from" not in opened


def test_it_ranks_by_time_cue_and_by_recency_without_one(mcp):
    scope = fresh_scope()
    now = datetime.now(UTC)
    opened = activate(mcp, scope, "Record incidents")
    data = ok(
        mcp.call(
            "slowave_remember",
            {
                "scope": scope,
                "session_id": opened["session_id"],
                "memories": [
                    {
                        "content": "Checkout database incident: the disk filled up",
                        "type": "fact",
                        "occurred_at": (now - timedelta(days=7)).isoformat(),
                    },
                    {
                        "content": "Checkout database incident: the connection pool ran dry",
                        "type": "fact",
                        "occurred_at": (now - timedelta(days=1)).isoformat(),
                    },
                ],
            },
        )
    )
    week_ago, yesterday = (r["data"]["memory_id"] for r in data["results"])
    ok(commit(mcp, opened["session_id"]))
    probe = activate(mcp, scope, "Review incidents")
    last_week = ok(
        mcp.call(
            "slowave_recall",
            {
                "session_id": probe["session_id"],
                "scope": scope,
                "query": "What incident hit the checkout database last week?",
            },
        )
    )
    assert ids(last_week)[:2] == [week_ago, yesterday]
    untimed = ok(
        mcp.call(
            "slowave_recall",
            {
                "session_id": probe["session_id"],
                "scope": scope,
                "query": "What incident hit the checkout database?",
            },
        )
    )
    assert ids(untimed)[0] == yesterday

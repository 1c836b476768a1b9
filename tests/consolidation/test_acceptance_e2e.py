"""Scenarios 35, 36, 37 and 41 end to end: agents write over MCP, `worker --once` runs in its own
process on the same database, and what consolidation made is seen over MCP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.acceptance.cycle import activate, commit, fresh_scope, full_feedback, ok, remember
from tests.consolidation.processes import manage, manage_json, pass_counts, rows, total_changes
from tests.e2e_support import McpClient, spawn_server

pytestmark = pytest.mark.timeout(600)
SUMMARIES = [
    "Release notes drafted for the billing team",
    "Migrated the cron jobs to the new scheduler",
    "Fixed the flaky login test in CI",
]
LEDGER_FACT = "The billing service stores invoices in the Postgres ledger database"
ARCHIVE_FACT = "Invoices older than seven years are archived to cold storage"
STEPS = [
    (
        "Ran the database migration against staging",
        "Migration finished and three tables were altered",
    ),
    ("Ran the database migration on staging", "Migration completed; three tables altered"),
    ("Ran the staging database migration", "Migration finished, three tables were altered"),
]


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    with spawn_server(home=tmp_path_factory.mktemp("slowave-consolidation")) as client:
        yield client


def _worker_once(mcp: McpClient) -> dict:
    return manage_json(mcp.home, "worker", "--once")


def _commit_clean(mcp: McpClient, opened: dict, summary: str = "done", **extra) -> None:
    if opened["memories"] or opened["procedures"]:
        full_feedback(mcp, opened, assessment="irrelevant")
    ok(commit(mcp, opened["session_id"], outcome_summary=summary, **extra))


def test_it_consolidates_three_similar_sessions_into_one_memory(mcp):
    scope = fresh_scope()
    for (action, observation), summary in zip(STEPS, SUMMARIES, strict=True):
        opened = activate(mcp, scope, "Migrate the staging database")
        _commit_clean(
            mcp,
            opened,
            summary,
            trajectory=[
                {"kind": "action", "summary": action, "status": "succeeded"},
                {"kind": "observation", "summary": observation},
            ],
        )
    counts = pass_counts(_worker_once(mcp))
    assert counts["consolidate_schemas"]["created"] == 1
    ((memory_id, content),) = rows(
        mcp.db_path,
        "SELECT id, content FROM memory_memory WHERE scope = ? AND origin = 'consolidated'",
        scope,
    )
    members = rows(
        mcp.db_path,
        "SELECT s.episode_id, s.event_id, e.first_event_id FROM memory_support s JOIN "
        "memory_episode e ON e.id = s.episode_id WHERE s.memory_id = ? AND s.kind = "
        "'consolidated_member'",
        memory_id,
    )
    assert len(members) == 3 and all(event == first for _, event, first in members)
    shown = activate(mcp, scope, "How do I run the database migration on staging?")
    found = [m for m in shown["memories"] if m["memory_id"] == f"sch_{memory_id}"]
    assert (
        found
        and found[0]["provenance"]["source_kind"] == "consolidated"
        and found[0]["content"] == content
    )
    assert total_changes(_worker_once(mcp)) == 0


def test_it_never_consolidates_around_a_forgotten_memory(mcp):
    scope = fresh_scope()
    fact = "The staging database is rebuilt from production every Sunday night"
    for summary in SUMMARIES:
        opened = activate(mcp, scope, "Prepare the staging environment")
        stored = remember(mcp, scope, opened["session_id"], fact)
        _commit_clean(mcp, opened, summary)
    done = manage(
        mcp.home, "forget", stored["memory_id"], "--reason", "the rebuild schedule changed"
    )
    assert done.returncode == 0, done.stderr
    assert pass_counts(_worker_once(mcp))["consolidate_schemas"]["skipped_forgotten"] == 1
    assert rows(
        mcp.db_path,
        "SELECT count(*) FROM memory_memory WHERE scope = ? AND origin = 'consolidated'",
        scope,
    ) == [(0,)]
    assert activate(mcp, scope, "When is the staging database rebuilt?")["memories"] == []


def _remember_pair_used_together(
    mcp: McpClient, scope: str, *, recall_between: bool
) -> tuple[str, str]:
    opened = activate(mcp, scope, "Write down where billing data lives")
    first = remember(mcp, scope, opened["session_id"], LEDGER_FACT)["memory_id"]
    if recall_between:
        between = ok(
            mcp.call(
                "slowave_recall",
                {
                    "session_id": opened["session_id"],
                    "scope": scope,
                    "query": "retention rules for old invoices",
                },
            )
        )
        if between["memories"]:
            full_feedback(mcp, between, assessment="irrelevant")
    second = remember(mcp, scope, opened["session_id"], ARCHIVE_FACT)["memory_id"]
    _commit_clean(mcp, opened)
    both = activate(
        mcp, scope, "Where are billing invoices stored?\nWhen are old invoices archived?"
    )
    assert {m["memory_id"] for m in both["memories"]} == {first, second}
    full_feedback(mcp, both, assessment="used")
    ok(commit(mcp, both["session_id"]))
    counts = pass_counts(_worker_once(mcp))["maintain_associations"]
    assert counts["temporal_created"] >= 1 and counts["cooccurrence_created"] >= 1
    return first, second


def _recall_billing_database(mcp: McpClient, scope: str) -> dict:
    asking = activate(mcp, scope, "Check the database configuration")
    return ok(
        mcp.call(
            "slowave_recall",
            {
                "session_id": asking["session_id"],
                "scope": scope,
                "query": "Which database does the billing service use?",
            },
        )
    )


def test_it_shows_the_next_remember_as_an_associated_memory(mcp):
    # Consecutive remembers with a recall between them: not adjacent events, so recall's
    # neighbouring-turn context (memory/retrieval/context.py) plays no part and the pair meets
    # only through the temporal association this pass maintains.
    scope = fresh_scope()
    first, second = _remember_pair_used_together(mcp, scope, recall_between=True)
    recalled = _recall_billing_database(mcp, scope)
    assert [(m["memory_id"], m["pathway"]) for m in recalled["memories"]] == [
        (first, "direct"),
        (second, "associated"),
    ]
    assert recalled["relevant_total"] == 1
    full_feedback(mcp, recalled, assessment="used")


def test_it_shows_the_very_next_remember_as_an_associated_memory(mcp):
    scope = fresh_scope()
    first, second = _remember_pair_used_together(mcp, scope, recall_between=False)
    recalled = _recall_billing_database(mcp, scope)
    assert [(m["memory_id"], m["pathway"]) for m in recalled["memories"]] == [
        (first, "direct"),
        (second, "associated"),
    ]


def test_it_shows_a_promoted_memory_in_another_project_but_not_a_client_scope(mcp):
    origin, second, third = fresh_scope("a"), fresh_scope("b"), fresh_scope("c")
    elsewhere, client = fresh_scope("d"), fresh_scope("x", kind="client")
    for scope in (elsewhere, client):  # both scopes exist (active) before the pass
        _commit_clean(mcp, activate(mcp, scope, "Unrelated setup work"))
    stored = []
    for scope, summary in zip((origin, second, third), SUMMARIES, strict=True):
        opened = activate(mcp, scope, "Record the deployment policy")
        stored.append(
            remember(
                mcp, scope, opened["session_id"], "Production deploys need two approving reviews"
            )["memory_id"]
        )
        _commit_clean(mcp, opened, summary)
    _worker_once(mcp)
    assert rows(
        mcp.db_path,
        "SELECT generalization_stage FROM memory_memory WHERE id = ?",
        int(stored[0][4:]),
    ) == [(1,)]
    shown = activate(mcp, elsewhere, "How many approving reviews does a production deploy need?")
    assert [m["memory_id"] for m in shown["memories"]] in ([stored[0]], [stored[1]])
    assert shown["memories"][0]["provenance"]["origin_scope"] in (origin, second)
    assert (
        activate(mcp, client, "How many approving reviews does a production deploy need?")[
            "memories"
        ]
        == []
    )

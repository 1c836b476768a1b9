"""How many SQL statements each agent verb runs, on the real SQLite store: a small number fixed
per call, whatever the batch, so the write path cannot drift back to a round trip per row.

The cycle is `slowave bench load`'s (activate, remember three facts, recall, feedback on all
shown, commit; every fourth commit records a procedure), run twice in one scope: the second
cycle is measured, with the first's memories, exposures and feedback in place. A budget that a
change has to raise is a finding to explain in its commit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory.schemas import ActivateIn, CommitIn, FeedbackIn, RecallIn, RememberIn
from memory.services.activate import session_activate
from memory.services.commit import session_commit
from memory.services.feedback import feedback_submit
from memory.services.recall import retrieval_recall
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo
from slowave_site.bench.load_agent import Agent, Plan, _assessment
from tests.factories import fresh_scope

pytestmark = pytest.mark.django_db

# Statements per call in a test's transaction (SAVEPOINT and RELEASE for BEGIN), reads of the
# ranking included: the most the two cycles below take. Before the lean write path the same
# cycle took 22 / 41 / 31 / 22 / 53-65 (remember: 10 more per item, commit: 9 per episode).
# Activate reads its procedures' track records in one more (one query for the whole page).
BUDGET = {"activate": 23, "remember": 19, "recall": 30, "feedback": 12, "commit": 30}


def _counted(counts: dict[str, int], verb: str, call: Callable[[], Any]) -> Any:
    with CaptureQueriesContext(connection) as queries:
        reply = call()
    counts[verb] = len(queries)
    return reply


def _cycle(plan: Plan, agent: Agent, scope: str, cycle: int) -> dict[str, int]:
    """One load-bench cycle through the services; statements per verb."""
    counts: dict[str, int] = {}
    topic, memories, query = plan.facts(agent.index, cycle)
    opened = _counted(
        counts,
        "activate",
        lambda: session_activate(
            data=ActivateIn(task=f"Document {topic}", initial_goal="record it", scope=scope),
            client=ClientInfo(),
            now=timezone.now(),
        ),
    )
    session = {"session_id": opened["session_id"], "scope": scope}
    stored = _counted(
        counts,
        "remember",
        lambda: memory_remember(data=RememberIn(**session, memories=memories), now=timezone.now()),
    )
    mine = {item["data"]["memory_id"] for item in stored["results"]}
    recalled = _counted(
        counts,
        "recall",
        lambda: retrieval_recall(data=RecallIn(**session, query=query), now=timezone.now()),
    )
    items = [_assessment(opened, agent.known), _assessment(recalled, mine | agent.known)]
    fed = _counted(
        counts,
        "feedback",
        lambda: feedback_submit(data=FeedbackIn(items=items), now=timezone.now()),
    )
    assert all(not item["data"]["rejected"] for item in fed["results"])
    agent.known |= mine
    committed = _counted(
        counts,
        "commit",
        lambda: session_commit(
            data=CommitIn(**agent._commit(opened["session_id"], topic, cycle)),
            now=timezone.now(),
        ),
    )
    assert committed["committed"] is True
    return counts


@pytest.mark.parametrize("cycle", [1, 4], ids=["plain", "with-procedure"])
def test_each_verb_stays_within_its_statement_budget(cycle: int) -> None:
    plan, scope = Plan(run="budget", agents=1), fresh_scope("budget")
    agent = Agent(index=0, url="", plan=plan, tally=None)  # type: ignore[arg-type]
    _cycle(plan, agent, scope, cycle - 1)
    counts = _cycle(plan, agent, scope, cycle)
    over = {verb: n for verb, n in counts.items() if n > BUDGET[verb]}
    assert not over, f"statements per call {counts}, budget {BUDGET}"


def test_a_remember_costs_the_same_statements_for_one_item_or_many() -> None:
    scope = fresh_scope("budget")
    opened = session_activate(
        data=ActivateIn(task="record facts", initial_goal="g", scope=scope),
        client=ClientInfo(),
        now=timezone.now(),
    )
    session = {"session_id": opened["session_id"], "scope": scope}

    def remembered(*contents: str) -> int:
        memories = [{"content": c, "type": "fact"} for c in contents]
        with CaptureQueriesContext(connection) as queries:
            memory_remember(data=RememberIn(**session, memories=memories), now=timezone.now())
        return len(queries)

    one = remembered("The billing queue retries failed requests 3 times")
    many = remembered(*(f"The search index number {n} is rebuilt nightly" for n in range(12)))
    assert many == one <= BUDGET["remember"]

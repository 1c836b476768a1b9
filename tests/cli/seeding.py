"""Memory built the way agents build it (tests/factories.py), for CLI tests to act on.

Runs inside a `slowave`-like subprocess (see runner.run_python), never in the pytest process.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from memory.schemas import FeedbackIn
from memory.services.feedback import feedback_submit
from memory.services.forgetting import memory_forget
from memory.services.sessions import ClientInfo
from tests.factories import commit, open_session, recall, remember

FACTS = [
    "The staging deploy needs database migrations applied before the release tag.",
    "The staging deploy uses the blue environment on Tuesdays.",
    "Invoices are generated on the first day of each month.",
    "The office plants are watered on Fridays.",
]
CLIENT = ClientInfo(name="cli-test", version="1", identity="tester")


def _commit(session_id: str, **extra: Any) -> None:
    verification = {"status": "verified", "summary": "checked"}
    commit(session_id, goal="done", summary="Finished.", verification=verification, **extra)


def seed(scope: str) -> dict[str, Any]:
    """Four facts; one shown and judged stale, the others used; one forgotten; a procedure."""
    now = timezone.now()
    first = open_session(scope, "Record deploy notes", goal="notes", client=CLIENT, now=now)
    ids = remember(scope, first["session_id"], *FACTS, occurred_at="2026-03-01T09:00:00Z", now=now)
    _commit(first["session_id"])
    second = open_session(
        scope,
        "Staging deploy needs database migrations before the release tag?\n"
        "Staging deploy uses the blue environment on Tuesdays?",
        goal="deploy",
        client=CLIENT,
    )
    shown = [m["memory_id"] for m in second["memories"]]
    assert len(shown) >= 2, second
    entries = [
        {
            "memory_id": shown[0],
            "assessment": "stale",
            "stale_reason": "outdated",
            "reason": "the blue environment was retired",
        }
    ]
    entries += [{"memory_id": m, "assessment": "used"} for m in shown[1:]]
    feedback_submit(
        data=FeedbackIn(
            retrieval_id=second["retrieval_id"],
            memory_feedback=entries,
            procedure_feedback=[
                {"procedure_id": p["procedure_id"], "use": "not_used"} for p in second["procedures"]
            ],
            coverage="complete",
        ),
        now=timezone.now(),
    )
    _commit(
        second["session_id"],
        procedure={
            "summary": "Deploy staging safely",
            "steps": [{"summary": "apply migrations"}, {"summary": "tag the release"}],
        },
    )
    memory_forget(
        memory_id=ids[3], reason="not about the project", actor="seed", now=timezone.now()
    )
    return {
        "ids": ids,
        "shown": shown,
        "stale": shown[0],
        "forgotten": ids[3],
        "session": second["session_id"],
        "retrieval": second["retrieval_id"],
        "procedure": f"proc_{second['session_id']}",
    }


SERVICES = ("billing", "search", "checkout", "inventory", "shipping", "accounts", "reports")
PARTS = ("queue", "cache", "database", "worker", "gateway")
# More related facts than one page of recall holds (20), worded apart enough to all rank.
RETRY_FACTS = [
    f"The {SERVICES[i % 7]} service {PARTS[i % 5]} retries failed requests {i + 2} times"
    for i in range(28)
]


def seed_paged_recall(scope: str) -> dict[str, Any]:
    """More related facts than one page holds, recalled once: page one shown (its first item
    judged used, the rest irrelevant), the rest not."""
    opened = open_session(scope, "Record retry notes", goal="notes", client=CLIENT)
    remember(scope, opened["session_id"], *RETRY_FACTS)
    reply = recall(scope, opened["session_id"], "How many times do services retry failed requests?")
    shown = [m["memory_id"] for m in reply["memories"]]
    feedback_submit(
        data=FeedbackIn(
            retrieval_id=reply["retrieval_id"],
            memory_feedback=[
                {"memory_id": m, "assessment": "used" if m == shown[0] else "irrelevant"}
                for m in shown
            ],
            coverage="complete",
        ),
        now=timezone.now(),
    )
    return {"retrieval": reply["retrieval_id"], "shown": shown}

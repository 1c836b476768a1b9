"""A budget for working memory, over stdio: `max_tokens` pages fit, cursors reach the rest.

Each page is measured as an agent would measure it, ceil(JSON chars / 4) of the items shown,
the estimate `accessible_field.approx_extra_tokens` announces for later pages."""

from __future__ import annotations

import json
import math
from typing import Any

from tests.acceptance.cycle import activate, commit, err, fresh_scope, full_feedback, ok, seeded

BUDGET = 256
QUERY = "How does the deploy pipeline roll back a failed release?"
LONG = " ".join(
    f"The deploy pipeline rolls back a failed release in stage {i} by restoring the previous "
    f"container image and replaying migration {i} backwards."
    for i in range(24)
)


def _memories() -> list[str]:
    """Nineteen deploy-pipeline facts of one to five sentences, and one of 24 sentences."""
    short = [
        " ".join(
            f"Deploy pipeline rule {i}.{j}: a failed release of service {i} waits {j + 1} "
            "minutes before the rollback restores the previous release."
            for j in range(1 + i % 5)
        )
        for i in range(19)
    ]
    return [LONG, *short]


def _tokens(items: list[dict[str, Any]]) -> int:
    chars = sum(len(json.dumps(i, ensure_ascii=False, sort_keys=True)) for i in items)
    return math.ceil(chars / 4)


def _recall(mcp, session: dict[str, str], **args: Any) -> dict[str, Any]:
    return ok(mcp.call("slowave_recall", {**session, **args}))


def test_it_pages_recall_within_a_token_budget_and_reaches_every_memory(mcp):
    scope = fresh_scope("budget")
    stored = seeded(mcp, scope, _memories())
    opened = activate(mcp, scope, "Fix the release rollback")
    session = {"session_id": opened["session_id"], "scope": scope}
    first = _recall(mcp, session, query=QUERY, max_tokens=BUDGET)
    pages = [first]
    while pages[-1]["more_available"]:
        cursor = pages[-1]["continue_from"]
        page = _recall(mcp, session, continue_from=cursor)
        assert _recall(mcp, session, continue_from=cursor) == page  # replays identically
        pages.append(page)
    assert len(pages) > 3
    for index, page in enumerate(pages):
        shown = page["memories"] + page["procedures"] + page.get("evidence", [])
        assert _tokens(shown) <= BUDGET, (index, page)
        later = [m for p in pages[index + 1 :] for m in p["memories"] + p["procedures"]]
        assert page["accessible_field"].get("approx_extra_tokens") == (
            _tokens(later) if later else None
        )
    seen = [m["memory_id"] for p in pages for m in p["memories"]]
    assert len(seen) == len(set(seen)) == len(stored) and set(seen) == set(stored)
    long_id = stored[0]
    [cut] = [m for p in pages for m in p["memories"] if m["memory_id"] == long_id]
    assert cut["content_truncated"] is True and cut["content_chars"] == len(LONG)
    assert cut["content"] and cut["content"] in LONG and _tokens([cut]) <= BUDGET
    # Only what was shown is owed feedback: every page's memories, the cut one included.
    owed = ok(
        mcp.call("slowave_feedback", {"retrieval_id": first["retrieval_id"], "coverage": "partial"})
    )["outstanding"]
    assert set(owed["memory_ids"]) == set(stored)
    full_feedback(mcp, {**first, "memories": [m for p in pages for m in p["memories"]]})
    if opened["memories"] or opened["procedures"]:
        full_feedback(mcp, opened)
    assert ok(commit(mcp, opened["session_id"]))["committed"] is True


def test_it_refuses_a_budget_it_cannot_honour(mcp):
    scope = fresh_scope("budget")
    opened = activate(mcp, scope, "Fix the release rollback")
    session = {"session_id": opened["session_id"], "scope": scope}
    for value in (0, -1, 10**9, 512.5, "512"):
        refused = err(mcp.call("slowave_recall", {**session, "query": QUERY, "max_tokens": value}))
        assert [e["path"] for e in refused["field_errors"]] == ["max_tokens"], refused
    refused = err(
        mcp.call(
            "slowave_activate",
            {"task": "t", "initial_goal": "g", "scope": scope, "max_tokens": 10},
        )
    )
    assert refused["field_errors"][0]["path"] == "max_tokens"
    assert "greater than or equal to 256" in refused["message"]

"""A budget for working memory: `max_tokens` pages on the real model and database.

Tokens are counted as the contract counts `approx_extra_tokens`: ceil(JSON chars / 4) of the
items a page shows, so each test measures a page exactly as an agent would."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from django.utils import timezone

from memory.errors import InvalidInput
from memory.models import Exposure, Retrieval
from memory.retrieval.budget import Budget, build_budget_pages
from memory.retrieval.paging import Entry
from memory.retrieval.policy import DEFAULT_POLICY
from memory.schemas import ActivateIn, RecallIn, RememberIn, parse_input
from memory.services.activate import session_activate
from memory.services.recall import retrieval_recall
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo

SCOPE = "project:budget"
QUERY = "How does the deploy pipeline roll back a failed release?"
LONG = " ".join(
    f"The deploy pipeline rolls back a failed release in stage {i} by restoring the previous "
    f"container image and replaying migration {i} backwards."
    for i in range(30)
)


def _varied(n: int) -> list[str]:
    """Deploy-pipeline facts of one to six sentences each."""
    return [
        " ".join(
            f"Deploy pipeline rule {i}.{j}: a failed release of service {i} waits {j + 1} "
            "minutes before the rollback restores the previous release."
            for j in range(1 + i % 6)
        )
        for i in range(n)
    ]


def _tokens(items: list[dict[str, Any]]) -> int:
    chars = sum(len(json.dumps(i, ensure_ascii=False, sort_keys=True)) for i in items)
    return math.ceil(chars / 4)


def _seed(contents: list[str]) -> dict[str, str]:
    opened = session_activate(
        data=ActivateIn(task="seed the scope", initial_goal="g", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )
    reply = memory_remember(
        data=RememberIn(
            scope=SCOPE,
            session_id=opened["session_id"],
            memories=[{"content": c, "type": "fact"} for c in contents],
        ),
        now=timezone.now(),
    )
    return {r["data"]["memory_id"]: c for r, c in zip(reply["results"], contents, strict=True)}


def _session() -> str:
    return session_activate(
        data=ActivateIn(task="fix the rollback", initial_goal="g", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )["session_id"]


def _all_pages(session_id: str, **args: Any) -> list[dict[str, Any]]:
    pages = [
        retrieval_recall(
            data=RecallIn(session_id=session_id, scope=SCOPE, query=QUERY, **args),
            now=timezone.now(),
        )
    ]
    while pages[-1]["more_available"]:
        cursor = RecallIn(
            session_id=session_id, scope=SCOPE, continue_from=pages[-1]["continue_from"]
        )
        pages.append(retrieval_recall(data=cursor, now=timezone.now()))
    return pages


def _shown(page: dict[str, Any]) -> list[dict[str, Any]]:
    return page["memories"] + page["procedures"] + page.get("evidence", [])


@pytest.mark.django_db
def test_it_packs_pages_within_the_budget_and_reaches_the_rest_by_cursor():
    stored = _seed(_varied(16))
    session_id = _session()
    unbudgeted = [m["memory_id"] for p in _all_pages(session_id) for m in p["memories"]]
    pages = _all_pages(session_id, max_tokens=300)
    assert len(pages) > 2
    for page in pages:
        assert _tokens(_shown(page)) <= 300, page
    seen = [m["memory_id"] for p in pages for m in p["memories"]]
    assert len(seen) == len(set(seen)) and set(seen) == set(stored)
    # The budget pages the same ranking: only where the pages break moves.
    assert [m for m in seen] == [m for m in unbudgeted if m in set(seen)]
    for index, page in enumerate(pages):
        later = [item for p in pages[index + 1 :] for item in p["memories"] + p["procedures"]]
        expected = _tokens(later) if later else None
        assert page["accessible_field"].get("approx_extra_tokens") == expected


@pytest.mark.django_db
def test_it_cuts_a_long_first_memory_rather_than_skipping_it():
    stored = _seed([LONG, *_varied(4)])
    long_id = next(i for i, c in stored.items() if c == LONG)
    session_id = _session()
    pages = _all_pages(session_id, max_tokens=256)
    first = pages[0]["memories"][0]
    assert first["memory_id"] == long_id
    assert first["content_truncated"] is True and first["content_chars"] == len(LONG)
    assert 0 < len(first["content"]) < 1_024 and first["content"] in LONG
    assert _tokens(_shown(pages[0])) <= 256
    retrieval = Retrieval.objects.get(pk=pages[0]["retrieval_id"])
    exposed = set(Exposure.objects.filter(retrieval=retrieval).values_list("target_id", flat=True))
    shown = {m["memory_id"] for p in pages for m in p["memories"]}
    assert long_id in exposed and exposed == shown
    assert retrieval.params["max_tokens"] == 256


@pytest.mark.django_db
def test_a_cursor_replays_its_budgeted_page_identically_and_adds_no_exposure():
    _seed(_varied(12))
    session_id = _session()
    first = retrieval_recall(
        data=RecallIn(session_id=session_id, scope=SCOPE, query=QUERY, max_tokens=256),
        now=timezone.now(),
    )
    cursor = RecallIn(session_id=session_id, scope=SCOPE, continue_from=first["continue_from"])
    once = retrieval_recall(data=cursor, now=timezone.now())
    exposures = Exposure.objects.count()
    assert retrieval_recall(data=cursor, now=timezone.now()) == once
    assert Exposure.objects.count() == exposures
    assert _tokens(_shown(once)) <= 256


@pytest.mark.django_db
def test_activate_pages_within_its_budget_and_without_one_is_unchanged():
    _seed(_varied(10))
    budgeted = session_activate(
        data=ActivateIn(task=QUERY, initial_goal="g", scope=SCOPE, max_tokens=256),
        client=ClientInfo(),
        now=timezone.now(),
    )
    assert budgeted["memories"] and _tokens(_shown(budgeted)) <= 256
    assert budgeted["more_available"] is True
    plain = session_activate(
        data=ActivateIn(task=QUERY, initial_goal="g", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )
    assert len(plain["memories"]) > len(budgeted["memories"])
    assert all("content_chars" not in m for m in plain["memories"])
    assert "max_tokens" not in Retrieval.objects.get(pk=plain["retrieval_id"]).params


def _entry(ref: str, kind: str, chars: int) -> Entry:
    key = "memory_id" if kind == "memory" else "procedure_id"
    filler = "x" * (chars - len(json.dumps({key: ref, "content": ""})))
    return Entry(ref, kind, "direct", "current", {"score": 1.0}, {key: ref, "content": filler})


def test_procedures_fill_what_memories_leave_and_one_too_big_travels_alone():
    budget = Budget(256, "q")  # 1,024 chars
    memories = [_entry(f"sch_{i}", "memory", 400) for i in range(3)]
    procedures = [_entry("proc_a", "procedure", 200), _entry("proc_b", "procedure", 3_000)]
    pages = build_budget_pages(memories, procedures, {}, DEFAULT_POLICY.paging, budget)
    refs = [[i["ref"] for i in p.memories + p.procedures] for p in pages]
    assert refs == [["sch_0", "sch_1", "proc_a"], ["sch_2"], ["proc_b"]]
    assert "content_truncated" not in pages[2].procedures[0]["payload"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "greater than or equal to 256"),
        (-1, "greater than or equal to 256"),
        (16_385, "less than or equal to 16384"),
        (10**12, "less than or equal to 16384"),
        (300.5, "valid integer"),
        (300.0, "valid integer"),
        ("300", "valid integer"),
        (True, "valid integer"),
    ],
)
@pytest.mark.parametrize("model", [ActivateIn, RecallIn])
def test_it_refuses_a_budget_out_of_bounds_or_not_an_integer(model, value, message):
    args = (
        {"task": "t", "initial_goal": "g", "scope": SCOPE}
        if model is ActivateIn
        else {"session_id": "sess_x", "scope": SCOPE, "query": "q"}
    )
    with pytest.raises(InvalidInput) as refused:
        parse_input(model, {**args, "max_tokens": value})
    assert [e["path"] for e in refused.value.field_errors] == ["max_tokens"]
    assert message in refused.value.field_errors[0]["message"]


def test_a_cursor_takes_no_budget_of_its_own():
    with pytest.raises(InvalidInput) as refused:
        parse_input(
            RecallIn,
            {"session_id": "s", "scope": SCOPE, "continue_from": "cur_x", "max_tokens": 512},
        )
    assert refused.value.field_errors == [
        {
            "path": "max_tokens",
            "message": "max_tokens is mutually exclusive with continue_from: a cursor pages "
            "with the budget of the call that returned it",
        }
    ]

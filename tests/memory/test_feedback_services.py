"""Feedback services on the real database: reinforcement ledger, stale marking, refinement."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memory.models import FeedbackEvent, Memory
from memory.schemas import FeedbackIn
from memory.services.feedback import feedback_submit
from tests.factories import open_session, recall, remember, retrieval

pytestmark = pytest.mark.django_db
SCOPE = "project:unit"


def _shown_memory() -> tuple[str, str]:
    now = timezone.now()
    seed = open_session(SCOPE, "seed", goal="g", now=now)
    (memory_id,) = remember(
        SCOPE, seed["session_id"], "Invoices are generated on the first day of the month", now=now
    )
    opened = retrieval(SCOPE, "When are invoices generated each month?", goal="g", now=now)
    assert [m["memory_id"] for m in opened["memories"]] == [memory_id]
    return opened["retrieval_id"], memory_id


def _send(retrieval_id: str, memory_id: str, **entry) -> dict:
    return feedback_submit(
        data=FeedbackIn(
            retrieval_id=retrieval_id, memory_feedback=[{"memory_id": memory_id, **entry}]
        ),
        now=timezone.now(),
    )


def _salience(memory_id: str) -> float:
    return Memory.objects.get(pk=int(memory_id[4:])).salience


def test_it_reinforces_once_and_refines_to_the_latest_assessment():
    retrieval_id, memory_id = _shown_memory()
    start = _salience(memory_id)
    assert _send(retrieval_id, memory_id, assessment="used")["applied"]["reinforced"] == 1
    assert _salience(memory_id) == pytest.approx(start + 0.30)
    _send(retrieval_id, memory_id, assessment="used")
    assert _salience(memory_id) == pytest.approx(start + 0.30)
    refined = _send(retrieval_id, memory_id, assessment="used", effect="harmed")
    assert refined["applied"]["weakened"] == 1
    assert _salience(memory_id) == pytest.approx(start - 0.50)
    latest = (
        FeedbackEvent.objects.filter(target_id=memory_id, status="accepted")
        .order_by("-created_at")
        .first()
    )
    assert latest.refines_event_id is not None


def test_it_marks_stale_once_and_halves_salience():
    retrieval_id, memory_id = _shown_memory()
    start = _salience(memory_id)
    data = _send(
        retrieval_id, memory_id, assessment="stale", stale_reason="outdated", reason="changed in v2"
    )
    assert data["applied"]["marked_stale"] == 1
    memory = Memory.objects.get(pk=int(memory_id[4:]))
    assert memory.status == "stale" and memory.stale_reason == "outdated"
    assert memory.salience == pytest.approx(start / 2)


def test_it_appends_only_and_refuses_updates_of_feedback_rows():
    from django.db import DatabaseError, transaction

    retrieval_id, memory_id = _shown_memory()
    _send(retrieval_id, memory_id, assessment="used")
    row = FeedbackEvent.objects.filter(target_id=memory_id).first()
    with pytest.raises(DatabaseError), transaction.atomic():
        FeedbackEvent.objects.filter(pk=row.pk).update(reason="rewritten")
    with pytest.raises(DatabaseError), transaction.atomic():
        FeedbackEvent.objects.filter(pk=row.pk).delete()


@pytest.mark.parametrize(
    "entry,reason",
    [
        (
            {"assessment": "used", "effect": "maybe"},
            "used_requires_helped_no_effect_or_harmed_effect",
        ),
        ({"assessment": "used", "relevance": "very"}, "invalid_relevance"),
        (
            {"assessment": "irrelevant", "effect": "helped"},
            "irrelevant_requires_unknown_or_absent_effect",
        ),
        ({"assessment": "stale", "effect": "helped"}, "stale_requires_unknown_or_absent_effect"),
        ({"assessment": "stale", "stale_reason": "bored"}, "stale_requires_valid_stale_reason"),
        ({"assessment": "stale", "stale_reason": "outdated"}, "stale_requires_reason"),
        (
            {"assessment": "used", "stale_reason": "outdated"},
            "stale_reason_requires_stale_assessment",
        ),
        (
            {"assessment": "used", "replacement_memory_id": "sch_1"},
            "replacement_requires_stale_assessment",
        ),
        (
            {
                "assessment": "stale",
                "stale_reason": "outdated",
                "reason": "r",
                "replacement_memory_id": "x",
            },
            "invalid_replacement_memory_id",
        ),
        (
            {
                "assessment": "stale",
                "stale_reason": "outdated",
                "reason": "r",
                "replacement_memory_id": "sch_99999",
            },
            "replacement_not_found",
        ),
    ],
)
def test_it_rejects_each_invalid_memory_assessment(entry, reason):
    retrieval_id, memory_id = _shown_memory()
    data = _send(retrieval_id, memory_id, **entry)
    assert data["rejected"] == [{"target_id": memory_id, "reason": reason}]
    assert Memory.objects.get(pk=int(memory_id[4:])).salience == 1.4


def _shown_twice() -> tuple[str, str, list[str]]:
    """Two retrievals (an activation and a recall) of one session that both show two facts."""
    now = timezone.now()
    seed = open_session(SCOPE, "seed", goal="g", now=now)
    ids = remember(
        SCOPE,
        seed["session_id"],
        "Invoices are generated on the first day of the month",
        "Invoices are generated in euros for European customers",
        now=now,
    )
    opened = retrieval(SCOPE, "How are invoices generated?", goal="g", now=now)
    recalled = recall(SCOPE, opened["session_id"], "How are invoices generated?")
    for shown in (opened, recalled):
        assert sorted(m["memory_id"] for m in shown["memories"]) == sorted(ids)
    return opened["retrieval_id"], recalled["retrieval_id"], ids


def test_it_applies_one_calls_records_in_order_as_separate_calls_would():
    first, second, (memory_id, other_id) = _shown_twice()
    start = _salience(memory_id)
    used = {"memory_id": memory_id, "assessment": "used"}
    data = feedback_submit(
        data=FeedbackIn(
            items=[
                {"retrieval_id": first, "memory_feedback": [used]},
                {
                    "retrieval_id": second,
                    "memory_feedback": [used, {"memory_id": memory_id, "assessment": "irrelevant"}],
                },
            ]
        ),
        now=timezone.now(),
    )
    applied = [item["data"]["applied"] for item in data["results"]]
    assert applied[0]["reinforced"] == 1
    assert (applied[1]["reinforced"], applied[1]["weakened"]) == (1, 1)
    # +0.30 for the first retrieval; the second's ledger ends at its latest row, -0.05
    assert _salience(memory_id) == pytest.approx(start + 0.30 - 0.05)
    assert _salience(other_id) == pytest.approx(start)


def test_it_refuses_a_replacement_that_an_earlier_entry_of_the_same_record_retires():
    first, _, (memory_id, other_id) = _shown_twice()
    stale = {"assessment": "stale", "reason": "changed in v2"}
    data = feedback_submit(
        data=FeedbackIn(
            retrieval_id=first,
            memory_feedback=[
                {"memory_id": other_id, **stale, "stale_reason": "outdated"},
                {
                    "memory_id": memory_id,
                    **stale,
                    "stale_reason": "superseded",
                    "replacement_memory_id": other_id,
                },
            ],
        ),
        now=timezone.now(),
    )
    assert data["rejected"] == [{"target_id": memory_id, "reason": "replacement_not_current"}]
    assert Memory.objects.get(pk=int(other_id[4:])).status == "stale"
    assert Memory.objects.get(pk=int(memory_id[4:])).status == "active"


def test_it_refuses_a_replacement_that_an_earlier_record_of_the_same_call_retires():
    first, second, (memory_id, other_id) = _shown_twice()
    stale = {"assessment": "stale", "reason": "changed in v2"}
    data = feedback_submit(
        data=FeedbackIn(
            items=[
                {
                    "retrieval_id": first,
                    "memory_feedback": [
                        {"memory_id": other_id, **stale, "stale_reason": "outdated"}
                    ],
                },
                {
                    "retrieval_id": second,
                    "memory_feedback": [
                        {
                            "memory_id": memory_id,
                            **stale,
                            "stale_reason": "superseded",
                            "replacement_memory_id": other_id,
                        }
                    ],
                },
            ]
        ),
        now=timezone.now(),
    )
    first_reply, second_reply = (item["data"] for item in data["results"])
    assert first_reply["applied"]["marked_stale"] == 1
    assert second_reply["rejected"] == [
        {"target_id": memory_id, "reason": "replacement_not_current"}
    ]
    assert Memory.objects.get(pk=int(other_id[4:])).status == "stale"
    assert Memory.objects.get(pk=int(memory_id[4:])).status == "active"

"""`retrieval_explain` on real retrievals (real model, real SQLite): each item's recorded signals
sum to its score, direct memories come in score order, and nothing is re-ranked to say so."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.utils import timezone

from memory.errors import NotFound
from memory.models import Association, Exposure, Retrieval, Session
from memory.retrieval import signals
from memory.schemas import ActivateIn, CommitIn, FeedbackIn, RecallIn, RememberIn
from memory.selectors import SIGNAL_MEANINGS, ExplainedItem, retrieval_explain
from memory.selectors.explain import SIGNAL_ORDER
from memory.services.activate import session_activate
from memory.services.commit import session_commit
from memory.services.feedback import feedback_submit
from memory.services.recall import retrieval_recall
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo

pytestmark = pytest.mark.django_db
SCOPE = "project:explain"
SERVICES = ("billing", "search", "checkout", "inventory", "shipping", "accounts", "reports")
PARTS = ("queue", "cache", "database", "worker", "gateway")
# More related facts than one page of recall holds (20), so the catalog has a second page.
FACTS = [
    f"The {SERVICES[i % 7]} service {PARTS[i % 5]} retries failed requests {i + 2} times"
    for i in range(32)
]
QUERY = "How many times do services retry failed requests?"
BASE_TERMS = ("topical", "coverage", "rrf")


def _open(task: str) -> dict[str, Any]:
    return session_activate(
        data=ActivateIn(task=task, initial_goal="answer", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )


def _remember(session_id: str, *contents: str) -> list[str]:
    reply = memory_remember(
        data=RememberIn(
            scope=SCOPE,
            session_id=session_id,
            memories=[{"content": c, "type": "fact"} for c in contents],
        ),
        now=timezone.now(),
    )
    return [r["data"]["memory_id"] for r in reply["results"]]


def _commit(session_id: str, **extra: Any) -> None:
    session_commit(
        data=CommitIn(
            session_id=session_id,
            final_goal="done",
            outcome="success",
            outcome_summary="Finished.",
            verification={"status": "verified", "summary": "checked"},
            **extra,
        ),
        now=timezone.now(),
    )


def _feedback(reply: dict[str, Any], *, used: str | None = None, helped: str = "") -> None:
    """Complete feedback on what `reply` showed: `used` was used, the rest irrelevant."""
    feedback_submit(
        data=FeedbackIn(
            retrieval_id=reply["retrieval_id"],
            memory_feedback=[
                {
                    "memory_id": m["memory_id"],
                    "assessment": "used" if m["memory_id"] == used else "irrelevant",
                }
                for m in reply["memories"]
            ],
            procedure_feedback=[
                _procedure_feedback(p["procedure_id"], helped) for p in reply["procedures"]
            ],
            coverage="complete",
        ),
        now=timezone.now(),
    )


def _procedure_feedback(procedure_id: str, helped: str) -> dict[str, str]:
    if procedure_id != helped:
        return {"procedure_id": procedure_id, "use": "not_used"}
    return {
        "procedure_id": procedure_id,
        "use": "used",
        "effect": "helped",
        "contribution": "it worked",
    }


def _assert_explained(item: ExplainedItem) -> None:
    """A direct item's contributions: known names, in the order ranking applies them, summing
    to its final score (each recorded to 4 places)."""
    names = [c.signal for c in item.signals]
    assert item.shape == "signals", item
    assert set(names) <= set(SIGNAL_ORDER), names
    assert names == sorted(names, key=SIGNAL_ORDER.index), names
    assert item.score is not None
    assert abs(sum(c.value for c in item.signals) - item.score) <= 1e-4 * (len(names) + 1)


def test_it_explains_every_direct_memory_by_signals_that_sum_to_its_score():
    session_id = _open("seed the retry notes")["session_id"]
    _remember(session_id, *FACTS)
    reply = retrieval_recall(
        data=RecallIn(session_id=session_id, scope=SCOPE, query=QUERY), now=timezone.now()
    )
    explained = retrieval_explain(retrieval_id=reply["retrieval_id"], all_items=True)
    row = Retrieval.objects.get(pk=reply["retrieval_id"])

    assert (explained.kind, explained.scope, explained.query) == ("recall", SCOPE, QUERY)
    assert explained.policy_version == row.policy_version
    assert explained.policy_version.startswith("slowave-hybrid-")
    assert explained.policy is not None and explained.policy["admission"]["floor"] == 0.35
    assert explained.pages >= 2 and len(explained.items) == explained.catalogued
    assert [i.rank for i in explained.items] == list(range(1, explained.catalogued + 1))
    direct = [i for i in explained.items if i.kind == "memory" and i.pathway == "direct"]
    assert len(direct) == row.relevant_total
    for item in direct:
        _assert_explained(item)
        assert set(BASE_TERMS) <= {c.signal for c in item.signals}, item.signals
        assert set(item.inputs) == {"cos", "coverage", "rrf", "temporal", "topical", "facet"}
        assert 0 <= item.inputs["facet"] < len(explained.facets)
        assert item.preview.startswith("The ") and "retries failed requests" in item.preview
    scores = [i.score or 0.0 for i in direct]
    assert scores == sorted(scores, reverse=True)
    assert explained.signal_names == sorted(explained.signal_names, key=SIGNAL_ORDER.index)
    assert set(BASE_TERMS) <= set(explained.signal_names)

    shown = {e.target_id: e for e in Exposure.objects.filter(retrieval=row)}
    assert {i.ref for i in explained.items if i.exposed} == set(shown)
    assert all(shown[i.ref].rank == i.rank for i in explained.items if i.exposed)
    assert [m["memory_id"] for m in reply["memories"]] == [i.ref for i in direct if i.page == 0]


def test_it_leaves_out_later_pages_the_agent_never_saw_unless_asked():
    session_id = _open("seed the retry notes")["session_id"]
    _remember(session_id, *FACTS)
    reply = retrieval_recall(
        data=RecallIn(session_id=session_id, scope=SCOPE, query=QUERY), now=timezone.now()
    )
    default = retrieval_explain(retrieval_id=reply["retrieval_id"])
    assert {i.page for i in default.items} == {0}
    assert all(i.exposed for i in default.items)
    assert default.exposed == len(default.items) < default.catalogued
    retrieval_recall(
        data=RecallIn(session_id=session_id, scope=SCOPE, continue_from=reply["continue_from"]),
        now=timezone.now(),
    )
    paged = retrieval_explain(retrieval_id=reply["retrieval_id"])
    assert 1 in {i.page for i in paged.items} and all(i.exposed for i in paged.items)
    assert paged.exposed == len(paged.items) > default.exposed


def test_it_reports_the_latest_accepted_feedback_per_item():
    session_id = _open("seed the retry notes")["session_id"]
    _remember(session_id, *FACTS[:5])
    _commit(session_id)
    opened = _open(QUERY)
    used = opened["memories"][0]["memory_id"]
    _feedback(opened, used=used)
    explained = retrieval_explain(retrieval_id=opened["retrieval_id"])
    labels = {i.ref: i.feedback.label for i in explained.items if i.feedback}
    assert labels[used] == "used / helped"
    assert {labels[i.ref] for i in explained.items if i.ref != used} == {"irrelevant"}
    assert len(labels) == len(opened["memories"])


def test_it_explains_associated_neighbours_and_procedures_with_their_feedback_signal():
    first = _open("record the export notes")["session_id"]
    (direct,) = _remember(first, "The nightly export job writes CSV files to the reports bucket")
    _commit(
        first,
        procedure={
            "goal": "Find where the nightly export job writes its CSV files",
            "summary": "Read the export job's configuration for its target bucket",
            "steps": [{"summary": "open the export job config"}],
        },
    )
    second = _open("record the encryption notes")["session_id"]
    (neighbour,) = _remember(second, "Those uploads are encrypted with the shared team key")
    _commit(second)
    Association.objects.create(
        src_id=int(direct[4:]),
        dst_id=int(neighbour[4:]),
        kind="temporal",
        weight=0.5,
        updated_at=timezone.now(),
    )
    task = "Where does the nightly export job write its CSV files?"
    shown = _open(task)
    (procedure,) = [p["procedure_id"] for p in shown["procedures"]]
    _feedback(shown, used=direct, helped=procedure)
    _commit(shown["session_id"])

    explained = retrieval_explain(retrieval_id=_open(task)["retrieval_id"])
    by_ref = {i.ref: i for i in explained.items}
    assert by_ref[neighbour].shape == "associated" and by_ref[neighbour].score is None
    assert by_ref[neighbour].parent == direct and by_ref[neighbour].inputs["weight"] == 0.5
    assert by_ref[neighbour].signals == [] and by_ref[neighbour].exposed
    _assert_explained(by_ref[direct])
    _assert_explained(by_ref[procedure])
    feedback = by_ref[procedure].contribution("feedback")
    assert feedback is not None and feedback > 0  # it helped last time
    order = {("memory", "direct"): 0, ("memory", "associated"): 1, ("procedure", "direct"): 2}
    groups = [order[(i.kind, i.pathway)] for i in explained.items]
    assert groups == sorted(groups) and set(groups) == {0, 1, 2}
    assert "feedback" in explained.signal_names


def test_it_reads_the_flat_scores_older_retrievals_kept():
    opened = _open("an old task")
    old = Retrieval.objects.create(
        id="rec_000000000old",
        kind="recall",
        session=Session.objects.get(pk=opened["session_id"]),
        scope=SCOPE,
        query="which port?",
        facets=["which port?"],
        policy_version="slowave-hybrid-v1",
        catalog={
            "pages": [
                {
                    "memories": [
                        {
                            "ref": "sch_1",
                            "kind": "memory",
                            "pathway": "direct",
                            "currency": "current",
                            "scores": {"cos": 0.7, "coverage": 0.5, "topical": 0.7, "score": 0.8},
                            "payload": {"memory_id": "sch_1", "content": "Port 8443"},
                        }
                    ],
                    "procedures": [],
                }
            ]
        },
        params={"min_relevance": 0.35},
        embedder="all-MiniLM-L6-v2",
        created_at=datetime(2026, 1, 5, tzinfo=UTC),
    )
    (item,) = retrieval_explain(retrieval_id=old.pk).items
    assert (item.shape, item.score, item.signals) == ("flat", 0.8, [])
    assert item.inputs == {"cos": 0.7, "coverage": 0.5, "topical": 0.7}
    assert item.preview == "Port 8443" and not item.exposed
    assert retrieval_explain(retrieval_id=old.pk).policy is None


def test_it_says_how_to_find_ids_for_an_unknown_retrieval():
    with pytest.raises(NotFound) as caught:
        retrieval_explain(retrieval_id="rec_nope")
    assert "no retrieval rec_nope" in caught.value.message
    assert "slowave show sess_" in caught.value.message


def test_it_glosses_every_signal_ranking_records_in_its_order():
    applied = [name for name, _ in signals.TERMS] + [s.name for s in signals.SIGNALS]
    assert [name for name in SIGNAL_ORDER if name in applied] == applied
    assert {"lead", "placed", "feedback"} <= set(SIGNAL_MEANINGS)
    assert all(SIGNAL_MEANINGS.values())

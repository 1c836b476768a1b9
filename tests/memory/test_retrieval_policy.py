"""The ranking policy: one value versions and records ranking, and each score term it weighs
moves items (real model, real SQLite). Signals read from sessions and speakers are tested in
test_retrieval_signals.py and test_retrieval_speakers.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.utils import timezone

from memory.models import Exposure, Memory, Retrieval
from memory.retrieval import policy as ranking_policy
from memory.retrieval.engine import rank
from memory.retrieval.policy import DEFAULT_POLICY
from memory.schemas import RecallIn
from memory.services.recall import retrieval_recall
from tests.memory.test_retrieval_signals import SCOPE, _facts, _ranked, _store, _without

pytestmark = pytest.mark.django_db


def _signals(cue: str, pk: int, policy=None) -> dict[str, float]:
    ranking = rank(scope=SCOPE, cue=cue, kind="recall", now=timezone.now(), policy=policy)
    (item,) = [it for it in ranking.memories if it.obj.pk == pk]
    return dict(item.signals)


def test_the_version_is_derived_from_the_values():
    assert DEFAULT_POLICY.version.startswith("slowave-hybrid-")
    assert DEFAULT_POLICY.version == replace(DEFAULT_POLICY).version
    assert _without("recall", reply_weight=0.9).version != DEFAULT_POLICY.version
    tuned = DEFAULT_POLICY.with_overrides(["recall.reply_weight=0.9", "pool=60"])
    assert tuned == _without("recall", reply_weight=0.9).with_overrides(["candidates.pool=60"])
    assert DEFAULT_POLICY.with_overrides(["floor=0.4"]).admission.floor == 0.4
    bad_values = ("pool=many", "pool=0.5", "pool=-3", "reply_weight=nan", "rrf_weight=inf")
    for bad in ("reply_weight", "reply_weight=", "nothing=1", "recall.nothing=1", *bad_values):
        with pytest.raises(ValueError):
            DEFAULT_POLICY.with_overrides([bad])


def test_replies_report_and_retrievals_keep_the_policy_they_ran_with():
    session_id, _ = _store([{"content": "The build cache lives on the NFS share", "type": "fact"}])
    tuned = _without("terms", coverage_weight=0.5)
    with ranking_policy.use(tuned):
        reply = retrieval_recall(
            data=RecallIn(session_id=session_id, scope=SCOPE, query="Where is the build cache?"),
            now=timezone.now(),
        )
    assert reply["retrieval_policy_version"] == tuned.version != DEFAULT_POLICY.version
    stored = Retrieval.objects.get(pk=reply["retrieval_id"])
    assert stored.policy_version == tuned.version
    assert stored.params["policy"]["terms"]["coverage_weight"] == 0.5


def test_the_recorded_final_score_orders_the_exposures():
    session_id, _ = _store(
        [
            {"content": line, "type": "fact"}
            for line in (
                "Tim: I ran the Boston marathon in April",
                "John: How did the marathon go?",
                "Tim: My marathon time was three hours and ten minutes",
                "Tim: I trained for the marathon every Sunday",
                "John: I prefer cycling to running",
                "Tim: The marathon route passes the river",
            )
        ]
    )
    reply = retrieval_recall(
        data=RecallIn(
            session_id=session_id, scope=SCOPE, query="How fast did Tim run the marathon?"
        ),
        now=timezone.now(),
    )
    rows = list(
        Exposure.objects.filter(retrieval_id=reply["retrieval_id"], pathway="direct")
        .order_by("rank")
        .values_list("scores", flat=True)
    )
    assert len(rows) >= 4
    finals = [row["score"] for row in rows]
    assert finals == sorted(finals, reverse=True)
    for row in rows:
        assert sum(value for _, value in row["signals"]) == pytest.approx(row["score"], abs=1e-3)
        assert [name for name, _ in row["signals"]][:1] == ["topical"]


def test_query_term_coverage_orders_admitted_items():
    # Both lines are about the office move; only one names the rare term the question asks for.
    vague, exact = _facts(
        "The office move happens next month and everyone packs their own desk",
        "Parking permits for the new office are handled by Priya",
    )
    cue = "Who handles parking permits after the office move?"
    assert _ranked(cue)[0] == exact
    assert _signals(cue, exact)["coverage"] > _signals(cue, vague).get("coverage", 0.0)
    assert "coverage" not in _signals(cue, exact, _without("terms", coverage_weight=0.0))


def test_salience_is_a_prior_that_feedback_shapes():
    low, high = _facts("The lab printer is on floor two", "The lab scanner sits by the kitchen")
    Memory.objects.filter(pk=low).update(salience=0.2)
    Memory.objects.filter(pk=high).update(salience=12.0)
    cue = "Which floor is the lab printer on?"
    assert _signals(cue, high)["salience"] > _signals(cue, low)["salience"]
    assert "salience" not in _signals(cue, high, _without("terms", salience_weight=0.0))


def test_a_stale_claim_ranks_at_the_stale_factor():
    _, (old, new) = _store(
        [
            {"content": "Deployments go out on Tuesdays", "type": "decision"},
            {"content": "Deployments go out on Thursdays", "type": "decision"},
        ]
    )
    Memory.objects.filter(pk=old).update(status="stale", superseded_by_id=new)
    cue = "Which day do deployments go out?"
    ranking = rank(scope=SCOPE, cue=cue, kind="recall", now=timezone.now())
    (item,) = [it for it in ranking.memories if it.obj.pk == old]
    names = [name for name, _ in item.signals]
    before = sum(value for _, value in item.signals[: names.index("stale")])
    assert dict(item.signals)["stale"] == pytest.approx(-0.5 * before)
    assert "stale" not in _signals(cue, old, _without("terms", stale_factor=1.0))


def test_a_contextual_memory_from_another_scope_ranks_lower_there():
    (outside,) = _store([{"content": "Release notes are written in Markdown", "type": "fact"}])[1]
    Memory.objects.filter(pk=outside).update(scope="project:elsewhere", generalization_stage=2)
    cue = "Which format are release notes written in?"
    damped = _signals(cue, outside)
    assert damped["scope"] < 0
    assert "scope" not in _signals(cue, outside, _without("terms", contextual_scope_factor=1.0))

"""Session-level signals on the real model and database (issue 24): a session matching the cue as
a whole, and evidence spread over sessions. Each test fails with its signal off."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.utils import timezone

from memory.retrieval.engine import rank
from memory.retrieval.policy import DEFAULT_POLICY, RankingPolicy
from memory.schemas import ActivateIn, RememberIn
from memory.services.activate import session_activate
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo

pytestmark = pytest.mark.django_db
SCOPE = "project:sessions"


def _session(*lines: str) -> list[int]:
    """One recorded session remembering the lines as facts, in order; their memory pks."""
    opened = session_activate(
        data=ActivateIn(task="chat", initial_goal="g", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )
    reply = memory_remember(
        data=RememberIn(
            scope=SCOPE,
            session_id=opened["session_id"],
            memories=[{"content": line, "type": "fact"} for line in lines],
        ),
        now=timezone.now(),
    )
    return [int(r["data"]["memory_id"][4:]) for r in reply["results"]]


def _with(**values: float) -> RankingPolicy:
    return replace(DEFAULT_POLICY, sessions=replace(DEFAULT_POLICY.sessions, **values))


def _ranked(cue: str, policy: RankingPolicy) -> list[int]:
    ranking = rank(scope=SCOPE, cue=cue, kind="recall", now=timezone.now(), policy=policy)
    return [it.obj.pk for it in ranking.memories]


def _filler() -> None:
    for topic in ("pasta recipes", "a road bike", "a tax form", "a job interview", "a garden"):
        _session(f"Can you help me with {topic}?", f"Thanks, that advice on {topic} helps.")


def test_a_session_matching_as_a_whole_lends_rank_to_its_best_turns():
    # The answer is spread over Biscuit's session: no turn of it matches the cue as well as a
    # lone line elsewhere, but the session as a whole does, and its best turns move up.
    _filler()
    biscuit = _session(
        "Biscuit had his allergy test at the clinic today.",
        "The vet wants him on a new diet with salmon.",
        "Also he needs a walk twice a day.",
    )
    (lone, _) = _session("The vet said my dog's allergy means a new diet.", "Ok.")
    cue = "What did the vet say about Biscuit's allergy and diet?"
    off = _ranked(cue, _with(evidence_weight=0.0))
    assert off.index(lone) < off.index(biscuit[1])
    on_policy = _with(evidence_weight=0.3)
    on = _ranked(cue, on_policy)
    assert on[:2] == biscuit[:2] and on.index(lone) == 2
    ranking = rank(scope=SCOPE, cue=cue, kind="recall", now=timezone.now(), policy=on_policy)
    by_pk = {it.obj.pk: dict(it.signals) for it in ranking.memories}
    assert by_pk[biscuit[0]]["session_evidence"] == pytest.approx(0.3)  # the best session
    assert by_pk[lone]["session_evidence"] < 0.3
    assert "session_evidence" not in by_pk.get(biscuit[2], {})  # only its best turns are lent to


def test_the_next_places_favour_other_sessions_that_also_match():
    # Three marathon turns in one session, one in another: with spread on, the other session's
    # turn is placed second, not fourth.
    _filler()
    first = _session(
        "I ran the Boston marathon in April in under four hours.",
        "The Boston marathon course has a hard hill at mile twenty.",
        "After the Boston marathon my legs hurt for a week.",
    )
    (second,) = _session("Berlin in September is my next marathon.")
    cue = "Which marathons have I run or signed up for?"
    off = _ranked(cue, _with(spread_weight=0.0))
    assert off[:4] == [*first, second]
    on = _ranked(cue, _with(spread_weight=0.4, spread_min_sessions=0))
    assert on[:3] == [first[0], second, first[1]]
    # Spread reads the scope's shape: seven sessions are no long history.
    assert _ranked(cue, _with(spread_weight=0.4, spread_min_sessions=8)) == off
    assert _ranked(cue, _with(spread_weight=0.4, spread_min_sessions=7))[:3] == on[:3]


def test_magnitude_fusion_leans_on_the_dense_channel_when_no_cue_term_is_rare_here():
    # No cue word occurs in the store: the dense share rises to blind_dense_share, so the best
    # dense match's fusion term is weight × blind share; with a cue word found once (rare),
    # the share is the even one.
    _filler()
    (puppy,) = _session("We brought home a small corgi puppy on Sunday.")
    policy = replace(DEFAULT_POLICY, fusion=replace(DEFAULT_POLICY.fusion, weight=0.5))
    rule = policy.fusion

    def fusion_of(cue: str) -> tuple[bool, float]:
        ranking = rank(scope=SCOPE, cue=cue, kind="recall", now=timezone.now(), policy=policy)
        top = next(it for it in ranking.memories if it.obj.pk == puppy)
        return ranking.cue.discriminative, dict(top.signals)["fusion"]

    blind, value = fusion_of("Which young dog did our family adopt?")
    assert not blind and value == pytest.approx(rule.weight * rule.blind_dense_share, abs=0.01)
    rare, value = fusion_of("Which corgi did our family adopt?")
    assert rare and value > rule.weight * rule.dense_share  # dense best, lexical share too
    off = rank(
        scope=SCOPE, cue="Which corgi did our family adopt?", kind="recall", now=timezone.now()
    )
    assert all("fusion" not in dict(it.signals) for it in off.memories)

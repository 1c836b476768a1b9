"""Imported history read in its sessions (memory/retrieval/history.py), on the real model and
database: recall's session signals move imported episodes as they move remembered turns, and
each test fails with the policy value that turns its signal off."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace

import pytest
from django.utils import timezone

from memory.retrieval.engine import rank
from memory.retrieval.policy import DEFAULT_POLICY, RankingPolicy
from memory.services.transcripts import transcripts_import
from tests.factories import fresh_scope

pytestmark = pytest.mark.django_db

OFF = replace(DEFAULT_POLICY, history=replace(DEFAULT_POLICY.history, session_signals=False))


def _import(scope: str, *sessions: list[str]) -> None:
    """Each session's lines said by the user and the assistant in turn."""
    lines = [
        json.dumps({"session_key": key, "role": ("user", "assistant")[i % 2], "content": text})
        for key, turns in ((uuid.uuid4().hex[:12], s) for s in sessions)
        for i, text in enumerate(turns)
    ]
    transcripts_import(lines=lines, scope=scope, now=timezone.now())


def _history(scope: str, cue: str, policy: RankingPolicy = DEFAULT_POLICY) -> list[str]:
    ranking = rank(scope=scope, cue=cue, kind="recall", now=timezone.now(), policy=policy)
    return [it.obj.content for it in ranking.history]


def _place(found: list[str], words: str) -> int:
    return next(at for at, content in enumerate(found) if words in content)


def test_the_answer_after_a_matching_question_outranks_a_line_that_only_names_the_subject():
    scope = fresh_scope("history")
    _import(
        scope,
        [
            "Morning! The weather is lovely today.",
            "What did the vet say about Biscuit's limp?",
            "She said it is a sprain and he needs two weeks of rest.",
            "Poor thing, I hope he heals quickly.",
        ],
        ["Biscuit loves chasing the ball at the park.", "Dogs are such good company."],
    )
    cue = "What did the vet say about Biscuit's limp?"
    read = _history(scope, cue)
    assert _place(read, "sprain") < _place(read, "chasing the ball"), read
    alone = _history(scope, cue, OFF)
    assert _place(alone, "sprain") > _place(alone, "chasing the ball"), alone


def test_an_imported_turn_is_covered_by_the_cue_words_rare_among_the_turns():
    # Before consolidation an imported scope holds no memories, so only the turns themselves
    # say which of the cue's words are rare: "vet" outweighs "garden", said in every session.
    scope = fresh_scope("history")
    common = [
        [f"The garden looked nice on day {n}.", "It did, the roses are out."] for n in range(8)
    ]
    _import(
        scope,
        *common,
        ["The vet called about the appointment.", "Good, we can go on Monday."],
    )
    cue = "What did the vet say in the garden?"

    def coverage(policy: RankingPolicy, words: str) -> float:
        ranking = rank(scope=scope, cue=cue, kind="recall", now=timezone.now(), policy=policy)
        items = [*ranking.history, *ranking.episodes()]
        return next(it.inputs["coverage"] for it in items if words in it.obj.content)

    idf_on = replace(DEFAULT_POLICY, history=replace(DEFAULT_POLICY.history, episode_idf=True))
    idf_off = replace(DEFAULT_POLICY, history=replace(DEFAULT_POLICY.history, episode_idf=False))
    assert coverage(idf_on, "vet called") > coverage(idf_on, "day 3")
    assert coverage(idf_on, "vet called") - coverage(idf_on, "day 3") > coverage(
        idf_off, "vet called"
    ) - coverage(idf_off, "day 3")

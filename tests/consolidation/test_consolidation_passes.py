"""Scenarios 35 and 36 on the services: prototypes, consolidated memories, forgotten matches."""

from __future__ import annotations

import pytest
from django.utils import timezone

from consolidation.services.consolidated import clip_at_sentence
from memory.models import Episode, Memory, Prototype, Support
from memory.services.forgetting import memory_forget
from tests.consolidation.support import (
    activate,
    changes,
    commit,
    feedback_all,
    fresh_scope,
    import_sessions,
    remember,
    run_consolidation,
)

pytestmark = pytest.mark.django_db

TURNS = [
    [
        ("user", "How do I rotate the staging database credentials?"),
        ("assistant", "Run the rotate-creds job in the ops console, then restart the API pods."),
    ],
    [
        ("user", "How can I rotate the staging database credentials?"),
        ("assistant", "Run the rotate-creds job from the ops console and restart the API pods."),
    ],
    [
        ("user", "How do I rotate staging database credentials?"),
        ("assistant", "Run the rotate-creds job in the ops console, then restart all API pods."),
    ],
]

# Distinct outcomes: identical outcome summaries would themselves recur and be consolidated.
SUMMARIES = [
    "Release notes drafted for the billing team",
    "Migrated the cron jobs to the new scheduler",
    "Fixed the flaky login test in CI",
]


def test_it_makes_one_consolidated_memory_from_three_similar_sessions():
    scope = fresh_scope()
    sessions = import_sessions(scope, TURNS)
    results = run_consolidation(scope)
    assert results["cluster_prototypes"].counts["created"] == 1
    assert results["consolidate_schemas"].counts["created"] == 1
    (memory,) = Memory.objects.filter(scope=scope)
    prototype = Prototype.objects.get(scope=scope)
    assert (memory.origin, memory.type, memory.salience, memory.prototype_id) == (
        "consolidated",
        "fact",
        1.0,
        prototype.pk,
    )
    assert prototype.memory_id == memory.pk and (
        prototype.support_count,
        prototype.session_count,
    ) == (3, 3)
    assert memory.content == prototype.medoid_episode.content and memory.embedded_at is not None
    members = list(Episode.objects.filter(prototype=prototype).order_by("pk"))
    links = Support.objects.filter(memory=memory, kind="consolidated_member").order_by("episode_id")
    assert [(s.episode_id, s.event_id, s.session_id) for s in links] == [
        (e.pk, e.first_event_id, e.session_id) for e in members
    ]
    assert {e.session_id for e in members} == set(sessions)


def test_it_changes_nothing_on_a_second_run():
    scope = fresh_scope()
    import_sessions(scope, TURNS)
    run_consolidation(scope)
    again = run_consolidation(scope)
    assert {name: changes(r.counts) for name, r in again.items()} == {name: 0 for name in again}


def test_it_links_members_that_join_later_without_a_new_memory():
    scope = fresh_scope()
    import_sessions(scope, TURNS)
    run_consolidation(scope)
    import_sessions(
        scope,
        [
            [
                ("user", "Rotate the staging database credentials: how?"),
                (
                    "assistant",
                    "Run the rotate-creds job in the ops console, then restart the API pods.",
                ),
            ]
        ],
    )
    results = run_consolidation(scope)
    assert results["cluster_prototypes"].counts["assigned"] == 1
    assert results["consolidate_schemas"].counts == {
        "created": 0,
        "linked": 0,
        "skipped_forgotten": 0,
        "skipped_outcome": 0,
        "members_linked": 1,
    }
    assert Memory.objects.filter(scope=scope).count() == 1


def test_it_never_turns_recurring_outcome_summaries_into_memories():
    scope = fresh_scope()
    for task in ("Fix the login bug", "Fix the signup bug", "Fix the logout bug"):
        opened = activate(scope, task)
        commit(opened["session_id"], summary="All tests pass after the fix")
    results = run_consolidation(scope)
    assert results["cluster_prototypes"].counts["created"] >= 1
    assert results["consolidate_schemas"].counts["skipped_outcome"] >= 1
    assert not Memory.objects.filter(scope=scope, content__startswith="Outcome:").exists()


def test_it_links_a_recurring_remember_to_its_memory_instead_of_copying_it():
    scope = fresh_scope()
    fact = "The staging database is rebuilt from production every Sunday night"
    ids = set()
    for summary in SUMMARIES:
        opened = activate(scope, "Prepare the staging environment for the release")
        ids.add(remember(scope, opened["session_id"], fact))
        if opened["memories"]:
            feedback_all(opened)
        commit(opened["session_id"], summary=summary)
    assert len(ids) == 1
    results = run_consolidation(scope)
    assert results["consolidate_schemas"].counts["linked"] == 1
    assert list(Memory.objects.filter(scope=scope).values_list("pk", flat=True)) == list(ids)


def test_it_never_consolidates_a_cluster_whose_nearest_memory_is_forgotten():
    scope = fresh_scope()
    fact = "The staging database is rebuilt from production every Sunday night"
    for summary in SUMMARIES:
        opened = activate(scope, "Prepare the staging environment for the release")
        pk = remember(scope, opened["session_id"], fact)
        if opened["memories"]:
            feedback_all(opened)
        commit(opened["session_id"], summary=summary)
    memory_forget(memory_id=f"sch_{pk}", reason="no longer true", actor="test", now=timezone.now())
    results = run_consolidation(scope)
    assert results["consolidate_schemas"].counts["skipped_forgotten"] == 1
    assert not Memory.objects.filter(scope=scope, origin="consolidated").exists()
    assert changes(run_consolidation(scope)["consolidate_schemas"].counts) == 0


def test_it_clips_long_medoid_text_at_a_sentence_end():
    text = ("First sentence is here. " * 60).strip()
    clipped = clip_at_sentence(text, 100)
    assert clipped.endswith(".") and len(clipped) <= 100
    assert clip_at_sentence("short text") == "short text"
    assert clip_at_sentence("word " * 300, 50).endswith("word")

"""Scenario 38 (decay), 14 (the reaper as a pass) and exact-duplicate archival."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from consolidation.services.decay import decay_plan
from memory.models import Memory, Session, Support
from tests.consolidation.support import activate, commit, fresh_scope, remember, run_pass, salience

pytestmark = pytest.mark.django_db
FACT = "The nightly export lands in the analytics bucket at 02:00 UTC"


def _memory_from(days_ago: float, scope: str) -> tuple[int, timezone.datetime]:
    start = timezone.now() - timedelta(days=days_ago)
    opened = activate(scope, "Record where exports land", now=start)
    pk = remember(scope, opened["session_id"], FACT, now=start)
    commit(opened["session_id"], now=start)
    return pk, start


@override_settings(SLOWAVE_DECAY_IDLE_DAYS=30, SLOWAVE_DECAY_HALF_LIFE_DAYS=90)
def test_it_decays_a_memory_idle_forty_days_by_ten_days_of_half_life():
    scope = fresh_scope()
    pk, start = _memory_from(0, scope)
    before = salience(pk)
    now = start + timedelta(days=40)
    assert run_pass("decay_unused", scope, now=now) == {"decayed": 1}
    assert salience(pk) == pytest.approx(before * 2 ** (-10 / 90))
    assert run_pass("decay_unused", scope, now=now) == {"decayed": 0}
    assert salience(pk) == pytest.approx(before * 2 ** (-10 / 90))


@override_settings(SLOWAVE_DECAY_IDLE_DAYS=30, SLOWAVE_DECAY_HALF_LIFE_DAYS=90)
def test_it_makes_twenty_daily_runs_equal_one_late_run():
    daily_scope, late_scope = fresh_scope("daily"), fresh_scope("late")
    daily, start = _memory_from(0, daily_scope)
    late, _ = _memory_from(0, late_scope)
    Memory.objects.filter(pk=late).update(created_at=start)
    for day in range(31, 51):
        run_pass("decay_unused", daily_scope, now=start + timedelta(days=day))
    run_pass("decay_unused", late_scope, now=start + timedelta(days=50))
    assert salience(daily) == pytest.approx(salience(late), rel=1e-9)
    assert salience(late) == pytest.approx(1.4 * 2 ** (-20 / 90))


@override_settings(SLOWAVE_DECAY_IDLE_DAYS=30, SLOWAVE_DECAY_HALF_LIFE_DAYS=90)
def test_it_counts_idleness_from_the_last_exposure():
    scope = fresh_scope()
    pk, start = _memory_from(0, scope)
    shown = activate(scope, "Where does the nightly export land?", now=start + timedelta(days=20))
    assert [m["memory_id"] for m in shown["memories"]] == [f"sch_{pk}"]
    assert decay_plan(now=start + timedelta(days=40), scope=scope) == []
    (change,) = decay_plan(now=start + timedelta(days=60), scope=scope)
    assert change.new_salience == pytest.approx(change.salience * 2 ** (-10 / 90))


@override_settings(SLOWAVE_SESSION_IDLE_TIMEOUT=1)
def test_it_reaps_idle_sessions_as_a_pass():
    scope = fresh_scope()
    opened = activate(scope, "A task the agent abandons")
    assert run_pass("reap_sessions", now=timezone.now() + timedelta(seconds=2)) == {"reaped": 1}
    session = Session.objects.get(pk=opened["session_id"])
    assert (session.status, session.ended_by, session.outcome, session.episodes_state) == (
        "ended",
        "reaper",
        "unknown",
        "formed",
    )
    assert run_pass("reap_sessions", now=timezone.now() + timedelta(seconds=2)) == {"reaped": 0}


@override_settings(SLOWAVE_SESSION_IDLE_TIMEOUT=0)
def test_it_reaps_nothing_when_the_timeout_is_zero():
    opened = activate(fresh_scope(), "A task that may idle")
    assert run_pass("reap_sessions", now=timezone.now() + timedelta(days=1)) == {"reaped": 0}
    assert Session.objects.get(pk=opened["session_id"]).status == "open"


def test_it_archives_exact_duplicates_keeping_the_oldest():
    scope = fresh_scope()
    opened = activate(scope, "Record facts")
    first = remember(scope, opened["session_id"], FACT)
    commit(opened["session_id"])
    # The partial unique index keeps live writes from duplicating; rows loaded without it can.
    # Dropping it here is undone when the test's transaction rolls back (SQLite DDL is
    # transactional).
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX memory_unique_active_hash")
    original = Memory.objects.get(pk=first)
    copy = Memory.objects.create(
        type="fact",
        content=FACT.upper(),
        normalized_hash=original.normalized_hash,
        scope=scope,
        scope_kind="project",
        created_at=original.created_at + timedelta(seconds=1),
    )
    Support.objects.create(memory=copy, kind="repeat", scope=scope, created_at=copy.created_at)
    assert run_pass("archive_duplicates", scope) == {"archived": 1, "supports_moved": 1}
    copy.refresh_from_db()
    assert (copy.status, copy.duplicate_of_id) == ("archived", first)
    assert Support.objects.filter(memory_id=first, kind="repeat").count() == 1
    assert run_pass("archive_duplicates", scope) == {"archived": 0, "supports_moved": 0}

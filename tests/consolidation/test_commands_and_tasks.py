"""Command twins of the passes (--json output, exit codes) and the tasks run eagerly."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.utils import timezone

from consolidation.scheduler import beat_schedule, celery_settings
from memory.models import Memory, Session, WorkerRun
from slowave_site.celery import app
from tests.consolidation.support import activate, commit, fresh_scope, import_sessions, remember

pytestmark = pytest.mark.django_db


def _call(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_it_prints_what_every_pass_did_once():
    text = _call("worker", "--once")
    assert [line.split()[:2] for line in text.splitlines()][0] == [
        "form_pending_episodes",
        "succeeded",
    ]
    assert len(text.splitlines()) == 11 and "reaped=0" in text
    report = json.loads(_call("worker", "--once", "--json"))
    assert report["ok"] is True and len(report["passes"]) == 11


def test_it_consolidates_only_the_scope_asked_for():
    scope, other = fresh_scope(), fresh_scope("other")
    turns = [
        [("user", "Where do the nightly backups go?"), ("assistant", "To the cold storage bucket.")]
    ]
    import_sessions(scope, turns)
    import_sessions(other, turns)
    report = json.loads(_call("consolidate", "--scope", scope, "--json"))
    assert {p["name"]: p["counts"] for p in report["passes"]}["cluster_prototypes"]["created"] == 1
    assert set(WorkerRun.objects.values_list("scope", flat=True)) == {scope}


@override_settings(SLOWAVE_SESSION_IDLE_TIMEOUT=0.01)
def test_it_reaps_from_the_command():
    opened = activate(fresh_scope(), "Abandoned task", now=timezone.now() - timedelta(minutes=1))
    report = json.loads(_call("reap", "--json"))
    assert report["passes"][0]["counts"] == {"reaped": 1}
    assert Session.objects.get(pk=opened["session_id"]).ended_by == "reaper"


@override_settings(SLOWAVE_DECAY_IDLE_DAYS=30, SLOWAVE_DECAY_HALF_LIFE_DAYS=90)
def test_it_previews_decay_without_writing_then_applies_it():
    scope = fresh_scope()
    start = timezone.now() - timedelta(days=45)
    opened = activate(scope, "Record", now=start)
    pk = remember(scope, opened["session_id"], "Reports are archived monthly", now=start)
    commit(opened["session_id"], now=start)
    later = (start + timedelta(days=40)).isoformat()
    preview = json.loads(_call("decay", "--now", later, "--dry-run", "--json"))
    assert preview["would_decay"] == 1 and preview["changes"][0]["memory_id"] == f"sch_{pk}"
    assert Memory.objects.get(pk=pk).last_decayed_at is None
    applied = json.loads(_call("decay", "--now", later, "--json"))
    assert applied["passes"][0]["counts"] == {"decayed": 1}
    assert json.loads(_call("decay", "--now", later, "--json"))["passes"][0]["counts"] == {
        "decayed": 0
    }
    with pytest.raises(CommandError, match="UTC offset"):
        _call("decay", "--now", "2026-01-01T00:00:00")


def test_it_runs_a_commits_follow_up_inline_when_tasks_are_eager(
    django_capture_on_commit_callbacks,
):
    scope = fresh_scope()
    opened = activate(scope, "Record the release day")
    remember(scope, opened["session_id"], "Releases go out on Tuesdays")
    app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            commit(opened["session_id"])
    finally:
        app.conf.task_always_eager = False
    runs = WorkerRun.objects.filter(triggered_by="commit", scope=scope)
    assert runs.count() == 9 and set(runs.values_list("status", flat=True)) == {"succeeded"}


def test_it_schedules_passes_decay_and_the_reaper():
    schedule = beat_schedule()
    assert schedule["consolidate"]["task"] == "consolidation.run_passes"
    assert schedule["consolidate"]["schedule"] == 300.0
    assert schedule["decay"]["schedule"].hour == {3} and schedule["decay"]["schedule"].minute == {
        15
    }
    assert schedule["reap"]["task"] == "consolidation.reap_sessions"
    with override_settings(SLOWAVE_SESSION_IDLE_TIMEOUT=0):
        assert "reap" not in beat_schedule()
    conf = celery_settings()
    assert conf["broker_url"] == "filesystem://" and conf["result_backend"].startswith("file://")
    assert conf["broker_transport_options"]["polling_interval"] == 0.1
    with override_settings(SLOWAVE_BROKER_URL="redis://127.0.0.1:6379/0"):
        assert "broker_url" not in celery_settings() and beat_schedule()["consolidate"][
            "kwargs"
        ] == {"triggered_by": "beat"}


def test_it_runs_a_task_whose_requested_at_has_no_offset():
    # Read as UTC; before, a naive value stopped the task on Django 5's missing timezone.utc.
    from consolidation.tasks import run_passes

    scope = fresh_scope()
    result = run_passes.apply(
        kwargs={"scope": scope, "triggered_by": "test", "requested_at": "2026-01-01T08:00:00"}
    ).get()
    assert len(result["passes"]) == 9
    statuses = set(WorkerRun.objects.filter(scope=scope).values_list("status", flat=True))
    assert statuses == {"succeeded"}

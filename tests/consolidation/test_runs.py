"""The pass runner: leases claimed by conditional update, coverage, WorkerRun records."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from consolidation.services.passes import ALL_PASSES, BY_NAME, passes_run
from consolidation.services.runs import LEASE, PassSpec, lock_claim, lock_release, pass_run
from memory.models import PassLock, WorkerRun

pytestmark = pytest.mark.django_db


def _counting(calls: list[dict]) -> PassSpec:
    def body(*, now, scope, since):
        calls.append({"now": now, "scope": scope, "since": since})
        return {"done": 1}

    return PassSpec("test_pass", body)


def test_it_claims_a_lease_only_when_it_is_free_or_expired():
    now = timezone.now()
    assert lock_claim(name="p", holder="a", now=now)
    assert not lock_claim(name="p", holder="b", now=now)
    assert lock_claim(name="p", holder="b", now=now + LEASE + timedelta(seconds=1))
    lock_release(name="p", holder="a")  # not the holder any more: changes nothing
    assert PassLock.objects.get(name="p").holder == "b"
    lock_release(name="p", holder="b")
    assert PassLock.objects.get(name="p").expires_at is None


def test_it_reports_busy_without_running_or_recording():
    calls: list[dict] = []
    lock_claim(name="test_pass", holder="someone else", now=timezone.now())
    result = pass_run(spec=_counting(calls), scope=None, triggered_by="test")
    assert (
        result.status == "busy"
        and calls == []
        and not WorkerRun.objects.filter(pass_name="test_pass").exists()
    )


def test_it_records_a_worker_run_and_releases_the_lease():
    calls: list[dict] = []
    result = pass_run(spec=_counting(calls), scope="project:x", triggered_by="cli")
    run = WorkerRun.objects.get(pk=result.run_id)
    assert (run.status, run.triggered_by, run.scope, run.counts) == (
        "succeeded",
        "cli",
        "project:x",
        {"done": 1},
    )
    assert run.finished_at is not None and PassLock.objects.get(name="test_pass").holder == ""
    assert calls[0]["since"] is None


def test_it_skips_work_a_later_run_already_covered():
    calls: list[dict] = []
    asked = timezone.now()
    first = pass_run(spec=_counting(calls), scope=None, triggered_by="commit", requested_at=asked)
    second = pass_run(
        spec=_counting(calls), scope="project:x", triggered_by="commit", requested_at=asked
    )
    assert (first.status, second.status, len(calls)) == ("succeeded", "covered", 1)
    third = pass_run(
        spec=_counting(calls), scope=None, triggered_by="commit", requested_at=timezone.now()
    )
    assert third.status == "succeeded" and len(calls) == 2


def test_it_reads_incrementally_from_a_little_before_the_last_run():
    calls: list[dict] = []
    pass_run(spec=_counting(calls), scope=None, triggered_by="test")
    pass_run(spec=_counting(calls), scope=None, triggered_by="test")
    started = WorkerRun.objects.filter(pass_name="test_pass").order_by("pk").first().started_at
    assert calls[1]["since"] is not None and calls[1]["since"] < started


def test_it_records_a_failed_pass_and_goes_on_with_the_next():
    def broken(*, now, scope, since):
        raise RuntimeError("disk on fire")

    calls: list[dict] = []
    results = passes_run(
        specs=(PassSpec("broken_pass", broken), _counting(calls)), scope=None, triggered_by="test"
    )
    assert [r.status for r in results] == ["failed", "succeeded"]
    run = WorkerRun.objects.get(pass_name="broken_pass")
    assert run.status == "failed" and "disk on fire" in run.error
    assert PassLock.objects.get(name="broken_pass").holder == ""


def test_it_fails_the_run_of_a_holder_whose_lease_ran_out():
    stale = WorkerRun.objects.create(
        pass_name="test_pass", triggered_by="beat", started_at=timezone.now()
    )
    lock_claim(
        name="test_pass", holder="crashed", now=timezone.now() - LEASE - timedelta(minutes=1)
    )
    pass_run(spec=_counting([]), scope=None, triggered_by="test")
    stale.refresh_from_db()
    assert stale.status == "failed" and "lease expired" in stale.error


def test_it_runs_every_pass_in_order_once():
    results = passes_run(specs=ALL_PASSES, scope=None, triggered_by="test")
    assert [r.name for r in results] == list(BY_NAME)
    assert [r.status for r in results] == ["succeeded"] * 11
    assert WorkerRun.objects.filter(status="succeeded").count() == 11

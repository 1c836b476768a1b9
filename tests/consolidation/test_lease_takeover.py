"""Taking over the lease of a holder whose process has exited (issue 16), on the real database."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from consolidation.services.runs import LEASE, default_holder, lock_claim
from memory.models import PassLock, WorkerRun
from memory.services.holders import holder_gone, local_host

pytestmark = pytest.mark.django_db


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def _held_by(holder: str) -> None:
    now = timezone.now()
    PassLock.objects.create(name="p", holder=holder, expires_at=now + LEASE)
    WorkerRun.objects.create(pass_name="p", triggered_by="cli", started_at=now)


def test_it_takes_over_at_once_a_lease_whose_process_on_this_host_has_exited(dead_pid):
    _held_by(f"{local_host()}:{dead_pid}:0badf00d")
    assert lock_claim(name="p", holder="me:1:token", now=timezone.now())
    assert PassLock.objects.get(name="p").holder == "me:1:token"
    run = WorkerRun.objects.get(pass_name="p")
    assert (run.status, run.error) == (
        "failed",
        f"the worker (process {dead_pid} on this machine) exited before the run finished",
    )


def test_of_two_claims_on_one_dead_lease_only_one_wins(dead_pid):
    _held_by(f"{local_host()}:{dead_pid}:0badf00d")
    now = timezone.now()
    first, second = default_holder(), default_holder()  # both alive: this process
    assert [lock_claim(name="p", holder=h, now=now) for h in (first, second)] == [True, False]
    assert PassLock.objects.get(name="p").holder == first


@pytest.mark.parametrize(
    "holder",
    [
        f"{local_host()}:{os.getpid()}:cafe0001",  # alive
        "another-host~4026531836:{pid}:cafe0002",  # elsewhere: its pids mean nothing here
        "worker-1",  # not host:pid:token
    ],
)
def test_it_waits_for_a_holder_not_known_to_be_gone(holder, dead_pid):
    holder = holder.format(pid=dead_pid)
    assert not holder_gone(holder)
    _held_by(holder)
    assert not lock_claim(name="p", holder="me:1:token", now=timezone.now())
    assert lock_claim(name="p", holder="me:1:token", now=timezone.now() + LEASE + timedelta(1))

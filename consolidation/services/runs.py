"""Running one pass safely: PassLock lease, coverage check, WorkerRun record (spec §8.3, §8.5).

A pass body (a function of `now`, `scope`, `since`) never deals with concurrency itself; this
module claims the pass's PassLock row with a conditional update, skips the run when a run that
started after the request already covered it, and records the outcome in a WorkerRun row.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, Protocol

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory.models import PassLock, WorkerRun

log = logging.getLogger(__name__)

LEASE = timedelta(minutes=15)
# Incremental passes re-read rows from a little before their previous run: a request stamps its
# rows with the time it started, and may commit a few seconds later. Re-reading is harmless
# (every write is an idempotent upsert); missing a row is not.
OVERLAP = timedelta(minutes=10)
WAIT_POLL_SECONDS = 0.25

Status = Literal["succeeded", "failed", "covered", "busy"]


class PassBody(Protocol):
    def __call__(
        self, *, now: datetime, scope: str | None, since: datetime | None
    ) -> dict[str, int]: ...


@dataclass(frozen=True)
class PassSpec:
    name: str
    body: PassBody
    # Incremental passes also sweep everything this often, healing anything a watermark missed.
    full_sweep_every: timedelta | None = None


@dataclass
class PassResult:
    name: str
    status: Status
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    run_id: int | None = None
    error: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "status": self.status,
            "counts": self.counts,
            "seconds": round(self.seconds, 3),
            "worker_run_id": self.run_id,
            "error": self.error,
        }


def default_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lock_claim(*, name: str, holder: str, now: datetime) -> bool:
    """Take the pass's lease iff nobody holds an unexpired one (proceed iff exactly one row)."""
    with transaction.atomic():
        PassLock.objects.get_or_create(name=name)
    free = Q(expires_at__isnull=True) | Q(expires_at__lt=now)
    with transaction.atomic():
        expired_holder = PassLock.objects.filter(free, name=name).exclude(holder="").exists()
        claimed = PassLock.objects.filter(free, name=name).update(
            holder=holder, expires_at=now + LEASE
        )
        if claimed == 1 and expired_holder:
            # The previous holder died mid-pass: its run row would otherwise say "running" forever.
            WorkerRun.objects.filter(pass_name=name, status=WorkerRun.Status.RUNNING).update(
                status=WorkerRun.Status.FAILED,
                finished_at=now,
                error="lease expired before the run finished",
            )
    return claimed == 1


def lock_release(*, name: str, holder: str) -> None:
    PassLock.objects.filter(name=name, holder=holder).update(holder="", expires_at=None)


def _same_or_wider(scope: str | None) -> Q:
    """Runs whose reach includes `scope`: that scope's own runs and unscoped (global) runs."""
    return Q(scope="") if not scope else Q(scope=scope) | Q(scope="")


def _covered(name: str, scope: str | None, requested_at: datetime) -> bool:
    return WorkerRun.objects.filter(
        _same_or_wider(scope),
        pass_name=name,
        status=WorkerRun.Status.SUCCEEDED,
        started_at__gte=requested_at,
    ).exists()


def _since(spec: PassSpec, scope: str | None, now: datetime) -> datetime | None:
    done = WorkerRun.objects.filter(
        _same_or_wider(scope), pass_name=spec.name, status=WorkerRun.Status.SUCCEEDED
    )
    if spec.full_sweep_every is not None:
        recent_sweep = done.filter(
            counts__full_sweep=1, started_at__gte=now - spec.full_sweep_every
        )
        if not recent_sweep.exists():
            return None
    last = done.order_by("-started_at").values_list("started_at", flat=True).first()
    return None if last is None else last - OVERLAP


def pass_run(
    *,
    spec: PassSpec,
    scope: str | None,
    triggered_by: str,
    requested_at: datetime | None = None,
    now: datetime | None = None,
    holder: str | None = None,
) -> PassResult:
    """Run one pass under its lease. `requested_at`: skip if a run started since then already
    did this work (None: always run). `now`: the pass's logical time (default: the wall clock)."""
    holder = holder or default_holder()
    wall = timezone.now()
    if not lock_claim(name=spec.name, holder=holder, now=wall):
        return PassResult(spec.name, "busy")
    try:
        if requested_at is not None and _covered(spec.name, scope, requested_at):
            return PassResult(spec.name, "covered")
        return _execute(spec, scope, triggered_by, wall, now or wall)
    finally:
        lock_release(name=spec.name, holder=holder)


def _execute(
    spec: PassSpec, scope: str | None, triggered_by: str, wall: datetime, now: datetime
) -> PassResult:
    since = _since(spec, scope, wall)
    run = WorkerRun.objects.create(
        pass_name=spec.name, triggered_by=triggered_by, scope=scope or "", started_at=wall
    )
    started = time.perf_counter()
    try:
        counts = spec.body(now=now, scope=scope, since=since)
    except Exception as exc:  # recorded on the run row; the caller decides whether to go on
        log.exception("pass %s failed", spec.name)
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        WorkerRun.objects.filter(pk=run.pk).update(
            status=WorkerRun.Status.FAILED, finished_at=timezone.now(), error=error[:4000]
        )
        return PassResult(
            spec.name, "failed", seconds=time.perf_counter() - started, run_id=run.pk, error=error
        )
    WorkerRun.objects.filter(pk=run.pk).update(
        status=WorkerRun.Status.SUCCEEDED, finished_at=timezone.now(), counts=counts
    )
    return PassResult(spec.name, "succeeded", counts, time.perf_counter() - started, run.pk)


def pass_run_waiting(
    *,
    spec: PassSpec,
    scope: str | None,
    triggered_by: str,
    requested_at: datetime | None = None,
    now: datetime | None = None,
    timeout: float = LEASE.total_seconds(),
    sleep: Callable[[float], None] = time.sleep,
) -> PassResult:
    """pass_run, waiting out a busy lease (then usually finding the work covered)."""
    deadline = time.monotonic() + timeout
    while True:
        result = pass_run(
            spec=spec, scope=scope, triggered_by=triggered_by, requested_at=requested_at, now=now
        )
        if result.status != "busy" or time.monotonic() >= deadline:
            return result
        sleep(WAIT_POLL_SECONDS)

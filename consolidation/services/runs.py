"""Running one pass safely: PassLock lease, coverage check, WorkerRun record (spec §8.3, §8.5).

A pass body (a function of `now`, `scope`, `since`) never deals with concurrency itself; this
module claims the pass's PassLock row with a conditional update (at once when the holder's
process, on this host, has exited; else when its lease expires), skips the run when a run that
started after the request already covered it, and records the outcome in a WorkerRun row.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, Protocol

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory import instruments
from memory.models import PassLock, WorkerRun
from memory.services.holders import holder_describe, holder_gone, holder_name

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
    """`host:pid:token`: on this host, a lease whose pid has exited is taken over at once."""
    return holder_name()


def _fail_running(name: str, now: datetime, error: str) -> None:
    # The previous holder died mid-pass: its run row would otherwise say "running" forever.
    WorkerRun.objects.filter(pass_name=name, status=WorkerRun.Status.RUNNING).update(
        status=WorkerRun.Status.FAILED, finished_at=now, error=error
    )


def lock_claim(*, name: str, holder: str, now: datetime) -> bool:
    """Take the pass's lease iff nobody holds an unexpired one, or its holder's process is gone
    (same host, pid exited). Each is a conditional update: proceed iff exactly one row changed,
    so of two workers reclaiming one lease only one gets it."""
    with transaction.atomic():
        PassLock.objects.get_or_create(name=name)
    free = Q(expires_at__isnull=True) | Q(expires_at__lt=now)
    with transaction.atomic():
        lock = PassLock.objects.get(name=name)
        if lock.expires_at is None or lock.expires_at < now:
            claimed = PassLock.objects.filter(free, name=name).update(
                holder=holder, expires_at=now + LEASE
            )
            if claimed == 1 and lock.holder:
                _fail_running(name, now, "lease expired before the run finished")
        elif holder_gone(lock.holder):
            claimed = PassLock.objects.filter(
                name=name, holder=lock.holder, expires_at=lock.expires_at
            ).update(holder=holder, expires_at=now + LEASE)
            if claimed == 1:
                gone = holder_describe(lock.holder)
                log.warning("pass %s: took over the lease of %s, which has exited", name, gone)
                _fail_running(name, now, f"the worker ({gone}) exited before the run finished")
        else:
            claimed = 0
    return claimed == 1


def lock_holder(*, name: str) -> tuple[str, datetime | None]:
    """Who holds the pass's lease and until when ("" and None when nobody does)."""
    row = PassLock.objects.filter(name=name).values_list("holder", "expires_at").first()
    return row if row is not None else ("", None)


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
    result = _leased(spec, scope, triggered_by, requested_at, now, holder or default_holder())
    instruments.pass_finished(name=spec.name, status=result.status, seconds=result.seconds)
    return result


def _leased(
    spec: PassSpec,
    scope: str | None,
    triggered_by: str,
    requested_at: datetime | None,
    now: datetime | None,
    holder: str,
) -> PassResult:
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
    announced = ""
    while True:
        # Measured once, when it ends: the polls in between are not passes that were busy.
        result = _leased(spec, scope, triggered_by, requested_at, now, default_holder())
        if result.status != "busy" or time.monotonic() >= deadline:
            instruments.pass_finished(name=spec.name, status=result.status, seconds=result.seconds)
            return result
        holder, until = lock_holder(name=spec.name)
        if holder and holder != announced:  # one line per holder, not one per poll
            announced = holder
            left = max(0, int(deadline - time.monotonic()))
            log.warning(
                "pass %s: waiting for %s, which holds its lease until %s UTC (waiting at most "
                "%d s; if that process exits, the lease is taken over at once)",
                spec.name,
                holder_describe(holder),
                f"{until:%H:%M:%S}" if until else "?",
                left,
            )
        sleep(WAIT_POLL_SECONDS)

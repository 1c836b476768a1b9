"""Celery tasks (spec §8.3, §8.5): thin adapters that call consolidation.services.passes.

`consolidation.run_passes` runs passes 1-8 (what a commit enqueues and beat schedules);
`consolidation.<pass>` runs one pass. Kwargs are primitives only: scope, triggered_by and
requested_at (ISO 8601, the moment the work was asked for, so a run that started later covers it).
Every pass is idempotent, hence acks_late; a pass whose lease is busy is retried, not waited on.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from celery import Task, shared_task
from django.utils import timezone

from consolidation.services.passes import ALL_PASSES, CONSOLIDATION_PASSES, passes_run
from consolidation.services.runs import PassSpec
from memory.models import WorkerRun

RETRY_SECONDS = 5
OPTIONS: dict[str, Any] = {
    "bind": True,
    "acks_late": True,
    "ignore_result": True,
    "soft_time_limit": 840,
    "time_limit": 900,
    # Long enough to outlast a crashed holder's 15-minute lease.
    "max_retries": 15 * 60 // RETRY_SECONDS + 20,
}


class PassFailed(RuntimeError):
    pass


def _requested_at(value: str | None) -> datetime:
    if not value:
        return timezone.now()
    parsed = datetime.fromisoformat(value)
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)


def _run(
    task: Task,
    specs: tuple[PassSpec, ...],
    scope: str | None,
    triggered_by: str,
    requested_at: str | None,
) -> dict[str, Any]:
    if triggered_by not in WorkerRun.TriggeredBy.values:
        raise ValueError(f"unknown triggered_by {triggered_by!r}")
    requested = _requested_at(requested_at)
    # Run eagerly (SLOWAVE_TASKS_INLINE), a retry would re-run at once; waiting is the only option.
    results = passes_run(
        specs=specs,
        scope=scope or None,
        triggered_by=triggered_by,
        requested_at=requested,
        wait=bool(task.request.is_eager),
    )
    if any(r.status == "busy" for r in results):
        raise task.retry(
            countdown=RETRY_SECONDS,
            kwargs={
                "scope": scope,
                "triggered_by": triggered_by,
                "requested_at": requested.isoformat(),
            },
        )
    failed = [f"{r.name}: {r.error}" for r in results if r.status == "failed"]
    if failed:
        raise PassFailed("; ".join(failed))
    return {"passes": [r.as_dict() for r in results]}


@shared_task(name="consolidation.run_passes", **OPTIONS)
def run_passes(
    self: Task,
    scope: str | None = None,
    triggered_by: str = "beat",
    requested_at: str | None = None,
) -> dict[str, Any]:
    """Passes 1-8 for one scope (or all scopes)."""
    return _run(self, CONSOLIDATION_PASSES, scope, triggered_by, requested_at)


def _pass_task(spec: PassSpec) -> Task:
    def run(
        self: Task,
        scope: str | None = None,
        triggered_by: str = "beat",
        requested_at: str | None = None,
    ) -> dict[str, Any]:
        return _run(self, (spec,), scope, triggered_by, requested_at)

    run.__name__ = run.__qualname__ = spec.name
    run.__doc__ = f"The {spec.name} pass (spec §8.3) under its lease."
    return shared_task(name=f"consolidation.{spec.name}", **OPTIONS)(run)


PASS_TASKS = {spec.name: _pass_task(spec) for spec in ALL_PASSES}

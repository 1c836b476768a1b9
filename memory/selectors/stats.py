"""Counts for people: `slowave stats`, `GET /api/stats` and the admin dashboard.

scope_stats is the one place the store is counted by entity and status; the dashboard reads
it, plus the few series only it shows (activity per day, salience bins, per-scope rows, work
waiting for the background passes). Reads only; the charts' geometry is memory.admin.dashboard's.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate

from memory.models import (
    Episode,
    Event,
    FeedbackEvent,
    ForgetLog,
    Memory,
    Procedure,
    Prototype,
    Retrieval,
    Session,
    WorkerRun,
)

if TYPE_CHECKING:
    from memory.replies.reads import StatsOut


def scope_stats(*, scope: str | None = None) -> StatsOut:
    """Counts per entity and status, overall or for one scope."""

    def scoped(qs: Any) -> Any:
        return qs.filter(scope=scope) if scope else qs

    memories = scoped(Memory.objects.all())
    by_scope = Counter(dict(memories.values_list("scope").annotate(n=Count("pk")).order_by()))
    return {
        "scope": scope,
        "memories": memories.count(),
        "memories_by_status": dict(
            Counter(dict(memories.values_list("status").annotate(n=Count("pk")).order_by()))
        ),
        "memories_by_stage": {
            str(k): v
            for k, v in memories.values_list("generalization_stage")
            .annotate(n=Count("pk"))
            .order_by()
        },
        "memories_by_scope": dict(sorted(by_scope.items())),
        "sessions": scoped(Session.objects.all()).count(),
        "open_sessions": scoped(Session.objects.filter(status=Session.Status.OPEN)).count(),
        "events": (
            Event.objects.filter(session__scope=scope) if scope else Event.objects.all()
        ).count(),
        "episodes": scoped(Episode.objects.all()).count(),
        "prototypes": scoped(Prototype.objects.all()).count(),
        "procedures": scoped(Procedure.objects.all()).count(),
        "retrievals": scoped(Retrieval.objects.all()).count(),
        "feedback_events": (
            FeedbackEvent.objects.filter(retrieval__scope=scope)
            if scope
            else FeedbackEvent.objects.all()
        ).count(),
        "forget_log": (
            ForgetLog.objects.filter(Q(memory__scope=scope) | Q(procedure__scope=scope))
            if scope
            else ForgetLog.objects.all()
        ).count(),
    }


def procedures_active_count() -> int:
    return Procedure.objects.filter(status=Procedure.Status.ACTIVE).count()


def memories_by_stage_unforgotten() -> dict[int, int]:
    """Generalization stage → memories not forgotten."""
    return dict(
        Memory.objects.exclude(status=Memory.Status.FORGOTTEN)
        .values_list("generalization_stage")
        .annotate(n=Count("pk"))
        .order_by()
    )


def memories_by_salience(bins: tuple[tuple[float, float], ...]) -> list[int]:
    """Active and stale memories per [lo, hi) salience bin; the last bin takes salience 20."""
    live = Memory.objects.filter(status__in=[Memory.Status.ACTIVE, Memory.Status.STALE])
    return [
        live.filter(salience__gte=lo, salience__lt=hi if hi < 20 else 20.0001).count()
        for lo, hi in bins
    ]


def _daily(queryset: QuerySet[Any], field: str, since: datetime, days: list[str]) -> list[int]:
    rows = (
        queryset.filter(**{f"{field}__gte": since})
        .annotate(day=TruncDate(field))
        .values("day")
        .annotate(n=Count("pk"))
        .order_by()
    )
    counts = {str(row["day"]): row["n"] for row in rows}
    return [counts.get(day, 0) for day in days]


def activity_by_day(*, since: datetime, days: list[str]) -> dict[str, list[int]]:
    """Sessions started, memories remembered, retrievals and feedback rows on each of `days`
    (ISO dates, the first of them `since`'s)."""
    return {
        "sessions": _daily(Session.objects.all(), "started_at", since, days),
        "remembers": _daily(
            Event.objects.filter(kind=Event.Kind.REMEMBER), "recorded_at", since, days
        ),
        "retrievals": _daily(Retrieval.objects.all(), "created_at", since, days),
        "feedback": _daily(FeedbackEvent.objects.all(), "created_at", since, days),
    }


def scope_rows(*, limit: int) -> list[dict[str, Any]]:
    """The `limit` scopes with most memories: total, active, forgotten, sessions."""
    # values() rows are plain dicts; sessions is added to them below.
    rows = cast(
        "list[dict[str, Any]]",
        list(
            Memory.objects.values("scope")
            .annotate(
                total=Count("pk"),
                active=Count("pk", filter=Q(status=Memory.Status.ACTIVE)),
                forgotten=Count("pk", filter=Q(status=Memory.Status.FORGOTTEN)),
            )
            .order_by("-total")[:limit]
        ),
    )
    sessions = dict(
        Session.objects.filter(scope__in=[r["scope"] for r in rows])
        .values_list("scope")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for row in rows:
        row["sessions"] = sessions.get(row["scope"], 0)
    return rows


def pending_work() -> list[tuple[str, int]]:
    """What the background passes have yet to do, by label."""
    return [
        (
            "Ended sessions awaiting episodes",
            Session.objects.filter(
                status=Session.Status.ENDED, episodes_state=Session.EpisodesState.PENDING
            ).count(),
        ),
        ("Memories without a vector", Memory.objects.filter(embedded_at__isnull=True).count()),
        ("Episodes without a vector", Episode.objects.filter(embedded_at__isnull=True).count()),
        ("Episodes not yet clustered", Episode.objects.filter(prototype__isnull=True).count()),
    ]


def worker_runs_recent(*, limit: int) -> list[WorkerRun]:
    return list(WorkerRun.objects.order_by("-started_at")[:limit])


def database_label() -> str:
    """Where the store is, for the start lines of `slowave up` and `mcp_serve`."""
    db = settings.DATABASES["default"]
    if not settings.DATABASE_URL:
        return str(db["NAME"])  # the SQLite file
    where = f"{db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}"
    return f"PostgreSQL database {db['NAME']} on {where}"

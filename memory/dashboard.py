"""The admin dashboard (spec §10): counts, activity, distributions, worker runs, DB health.

Charts are server-rendered SVG: this module computes the geometry, the template draws it, so the
page works offline with no JavaScript or CDN. Reads only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from django.contrib import admin
from django.db.models import Count, Q
from django.db.models.functions import TruncDate
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone

from memory.models import (
    Episode,
    Event,
    FeedbackEvent,
    Memory,
    Procedure,
    Retrieval,
    Session,
    WorkerRun,
)
from memory.services.doctor import database_health

DAYS = 30
SALIENCE_BINS = ((0, 0.5), (0.5, 1), (1, 2), (2, 5), (5, 10), (10, 20))
STAGES = ("0 origin", "1 portable", "2 contextual", "3 global")
STATUS_COLOURS = {
    "active": "#2da44e",
    "stale": "#d4a72c",
    "archived": "#8c959f",
    "forgotten": "#cf222e",
}


@dataclass
class Bar:
    x: float
    y: float
    w: float
    h: float
    value: int
    label: str


def bar_chart(
    values: list[int], labels: list[str], *, width: int = 320, height: int = 120, gap: float = 2.0
) -> dict[str, Any]:
    """Vertical bars scaled to the largest value; the template adds axes and tooltips."""
    top = max(values) if values and max(values) > 0 else 1
    head, baseline = 12, height - 18  # room for values above and labels below the bars
    scale = (baseline - head) / top
    slot = width / max(len(values), 1)
    bars = [
        Bar(
            x=round(i * slot + gap / 2, 2),
            y=round(baseline - v * scale, 2),
            w=round(max(slot - gap, 1), 2),
            h=round(v * scale, 2),
            value=v,
            label=label,
        )
        for i, (v, label) in enumerate(zip(values, labels, strict=True))
    ]
    return {
        "bars": bars,
        "width": width,
        "height": height,
        "max": max(values, default=0),
        "total": sum(values),
        "baseline": baseline,
        "colour": "#0969da",
        "title": "",
        "ticks": [],
    }


def _daily(queryset: Any, field: str, since: datetime, days: list[str]) -> list[int]:
    rows = (
        queryset.filter(**{f"{field}__gte": since})
        .annotate(day=TruncDate(field))
        .values("day")
        .annotate(n=Count("pk"))
        .order_by()
    )
    counts = {str(row["day"]): row["n"] for row in rows}
    return [counts.get(day, 0) for day in days]


def activity(*, now: datetime) -> list[dict[str, Any]]:
    """Sessions, remembers, retrievals and feedback per day over the last 30 days."""
    start = (now - timedelta(days=DAYS - 1)).date()
    since = datetime.combine(start, datetime.min.time(), tzinfo=now.tzinfo)
    days = [str(start + timedelta(days=i)) for i in range(DAYS)]
    # Weekly ticks counted back from today, so the newest bar is always labelled.
    labels = [d[5:] if (DAYS - 1 - i) % 7 == 0 else "" for i, d in enumerate(days)]
    series = [
        ("Sessions started", "#0969da", _daily(Session.objects.all(), "started_at", since, days)),
        (
            "Memories remembered",
            "#2da44e",
            _daily(Event.objects.filter(kind=Event.Kind.REMEMBER), "recorded_at", since, days),
        ),
        ("Retrievals", "#8250df", _daily(Retrieval.objects.all(), "created_at", since, days)),
        (
            "Feedback rows",
            "#bf8700",
            _daily(FeedbackEvent.objects.all(), "created_at", since, days),
        ),
    ]
    charts = []
    for title, colour, values in series:
        chart = bar_chart(values, labels, width=330, height=110, gap=2)
        for bar, day in zip(chart["bars"], days, strict=True):
            bar.label = day
        # The newest tick sits at the right edge: anchor it at its end so it is not clipped.
        chart.update(
            title=title,
            colour=colour,
            ticks=[
                (b.x + b.w, lab, "end") if i == DAYS - 1 else (b.x + b.w / 2, lab, "middle")
                for i, (b, lab) in enumerate(zip(chart["bars"], labels, strict=True))
                if lab
            ],
        )
        charts.append(chart)
    return charts


def salience_histogram() -> dict[str, Any]:
    live = Memory.objects.filter(status__in=[Memory.Status.ACTIVE, Memory.Status.STALE])
    values = [
        live.filter(salience__gte=lo, salience__lt=hi if hi < 20 else 20.0001).count()
        for lo, hi in SALIENCE_BINS
    ]
    return bar_chart(
        values, [f"{lo:g}–{hi:g}" for lo, hi in SALIENCE_BINS], width=330, height=130, gap=10
    )


def stage_distribution() -> dict[str, Any]:
    counts = dict(
        Memory.objects.exclude(status=Memory.Status.FORGOTTEN)
        .values_list("generalization_stage")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return bar_chart(
        [counts.get(i, 0) for i in range(4)], list(STAGES), width=330, height=130, gap=16
    )


def status_strip(*, width: int = 330) -> dict[str, Any]:
    """One horizontal strip split by memory status, with a legend."""
    counts = dict(Memory.objects.values_list("status").annotate(n=Count("pk")).order_by())
    total = sum(counts.values()) or 1
    x, parts = 0.0, []
    for status, colour in STATUS_COLOURS.items():
        n = counts.get(status, 0)
        w = n / total * width
        parts.append(
            {"status": status, "colour": colour, "n": n, "x": round(x, 2), "w": round(w, 2)}
        )
        x += w
    return {"parts": parts, "width": width, "total": sum(counts.values())}


def scope_table(limit: int = 12) -> list[dict[str, Any]]:
    # values() rows are plain dicts; sessions and bar are added to them below.
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
    top = max((r["total"] for r in rows), default=1) or 1
    for row in rows:
        row["sessions"] = sessions.get(row["scope"], 0)
        row["bar"] = round(row["total"] / top * 160, 1)
    return rows


def counts() -> list[tuple[str, int]]:
    return [
        ("Active memories", Memory.objects.filter(status=Memory.Status.ACTIVE).count()),
        ("Stale", Memory.objects.filter(status=Memory.Status.STALE).count()),
        ("Suppressed", Memory.objects.filter(status=Memory.Status.FORGOTTEN).count()),
        ("Sessions", Session.objects.count()),
        ("Open sessions", Session.objects.filter(status=Session.Status.OPEN).count()),
        ("Episodes", Episode.objects.count()),
        ("Procedures", Procedure.objects.filter(status=Procedure.Status.ACTIVE).count()),
        ("Retrievals", Retrieval.objects.count()),
        ("Feedback rows", FeedbackEvent.objects.count()),
    ]


def pending_work() -> list[tuple[str, int]]:
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


def recent_runs(limit: int = 20) -> list[dict[str, Any]]:
    runs = WorkerRun.objects.order_by("-started_at")[:limit]
    return [
        {
            "run": r,
            "seconds": (r.finished_at - r.started_at).total_seconds() if r.finished_at else None,
        }
        for r in runs
    ]


def dashboard_context(*, now: datetime, quick_check: bool = False) -> dict[str, Any]:
    return {
        "counts": counts(),
        "activity": activity(now=now),
        "salience": salience_histogram(),
        "stages": stage_distribution(),
        "status": status_strip(),
        "scopes": scope_table(),
        "runs": recent_runs(),
        "pending": pending_work(),
        "health": database_health(quick_check=quick_check),
        "now": now,
    }


def dashboard_view(request: HttpRequest) -> TemplateResponse:
    """Wrapped by admin.site.admin_view in urls.py, so only logged-in staff reach it."""
    context = {
        **admin.site.each_context(request),
        "title": "Dashboard",
        **dashboard_context(now=timezone.now(), quick_check=request.GET.get("check") == "1"),
    }
    return TemplateResponse(request, "admin/memory/dashboard.html", context)

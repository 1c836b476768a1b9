"""The admin dashboard (spec §10): counts, activity, distributions, worker runs, DB health.

Charts are server-rendered SVG: this module computes the geometry, the template draws it, so the
page works offline with no JavaScript or CDN. Reads only, all of them through the selectors
(memory.selectors.stats: the same scope_stats as `slowave stats` and `GET /api/stats`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone

from memory.selectors.stats import (
    activity_by_day,
    memories_by_salience,
    memories_by_stage_unforgotten,
    pending_work,
    procedures_active_count,
    scope_rows,
    scope_stats,
    worker_runs_recent,
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


def activity(*, now: datetime) -> list[dict[str, Any]]:
    """Sessions, remembers, retrievals and feedback per day over the last 30 days."""
    start = (now - timedelta(days=DAYS - 1)).date()
    since = datetime.combine(start, datetime.min.time(), tzinfo=now.tzinfo)
    days = [str(start + timedelta(days=i)) for i in range(DAYS)]
    # Weekly ticks counted back from today, so the newest bar is always labelled.
    labels = [d[5:] if (DAYS - 1 - i) % 7 == 0 else "" for i, d in enumerate(days)]
    per_day = activity_by_day(since=since, days=days)
    series = [
        ("Sessions started", "#0969da", per_day["sessions"]),
        ("Memories remembered", "#2da44e", per_day["remembers"]),
        ("Retrievals", "#8250df", per_day["retrievals"]),
        ("Feedback rows", "#bf8700", per_day["feedback"]),
    ]
    charts = []
    for title, colour, values in series:
        chart = bar_chart(values, labels, width=330, height=110, gap=2)
        for bar, day in zip(chart["bars"], days, strict=True):
            bar.label = day
        # The newest tick sits at the right edge: anchor it at its end so it is not clipped.
        chart["ticks"] = [
            (b.x + b.w, lab, "end") if i == DAYS - 1 else (b.x + b.w / 2, lab, "middle")
            for i, (b, lab) in enumerate(zip(chart["bars"], labels, strict=True))
            if lab
        ]
        chart["title"], chart["colour"] = title, colour
        charts.append(chart)
    return charts


def salience_histogram() -> dict[str, Any]:
    values = memories_by_salience(SALIENCE_BINS)
    return bar_chart(
        values, [f"{lo:g}–{hi:g}" for lo, hi in SALIENCE_BINS], width=330, height=130, gap=10
    )


def stage_distribution() -> dict[str, Any]:
    counts = memories_by_stage_unforgotten()
    return bar_chart(
        [counts.get(i, 0) for i in range(4)], list(STAGES), width=330, height=130, gap=16
    )


def status_strip(stats: Mapping[str, Any], *, width: int = 330) -> dict[str, Any]:
    """One horizontal strip split by memory status (from scope_stats), with a legend."""
    counts: dict[str, int] = stats["memories_by_status"]
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
    rows = scope_rows(limit=limit)
    top = max((r["total"] for r in rows), default=1) or 1
    for row in rows:
        row["bar"] = round(row["total"] / top * 160, 1)
    return rows


def counts(stats: Mapping[str, Any]) -> list[tuple[str, int]]:
    """The headline numbers, from scope_stats (procedures: the active ones only)."""
    by_status = stats["memories_by_status"]
    return [
        ("Active memories", by_status.get("active", 0)),
        ("Stale", by_status.get("stale", 0)),
        ("Suppressed", by_status.get("forgotten", 0)),
        ("Sessions", stats["sessions"]),
        ("Open sessions", stats["open_sessions"]),
        ("Episodes", stats["episodes"]),
        ("Procedures", procedures_active_count()),
        ("Retrievals", stats["retrievals"]),
        ("Feedback rows", stats["feedback_events"]),
    ]


def recent_runs(limit: int = 20) -> list[dict[str, Any]]:
    return [
        {
            "run": r,
            "seconds": (r.finished_at - r.started_at).total_seconds() if r.finished_at else None,
        }
        for r in worker_runs_recent(limit=limit)
    ]


def dashboard_context(*, now: datetime, quick_check: bool = False) -> dict[str, Any]:
    stats = scope_stats()
    return {
        "counts": counts(stats),
        "activity": activity(now=now),
        "salience": salience_histogram(),
        "stages": stage_distribution(),
        "status": status_strip(stats),
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

"""Pass 9, decay_unused (spec §8.4): unused memories lose salience with a half-life.

anchor = latest of creation, last exposure and last accepted `used`. A memory idle for less than
SLOWAVE_DECAY_IDLE_DAYS is left alone; otherwise it decays over the time since the later of
(anchor + idle) and `last_decayed_at`, so the same `now` twice is a no-op and twenty daily runs
equal one late run. Decay changes salience (a ranking prior) only, never status or admission.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from consolidation.services.common import chunks, scoped
from memory.ids import memory_ref
from memory.models import Exposure, FeedbackEvent, Memory

MIN_SALIENCE = 0.01
DECAYING = (Memory.Status.ACTIVE, Memory.Status.STALE)


@dataclass(frozen=True)
class DecayChange:
    memory_id: int
    salience: float
    new_salience: float
    last_decayed_at: datetime | None

    def as_dict(self) -> dict[str, object]:
        return {
            "memory_id": memory_ref(self.memory_id),
            "salience": self.salience,
            "new_salience": self.new_salience,
        }


def _latest(queryset, field: str, refs: list[str]) -> dict[str, datetime]:
    rows = (
        queryset.filter(target_kind="memory", target_id__in=refs)
        .values("target_id")
        .annotate(at=Max(field))
    )
    return {row["target_id"]: row["at"] for row in rows}


def decayed_salience(
    *,
    salience: float,
    anchor: datetime,
    last_decayed_at: datetime | None,
    now: datetime,
    idle: timedelta,
    half_life_days: float,
) -> float | None:
    """The decayed value, or None when nothing is due."""
    if now - anchor < idle:
        return None
    start = anchor + idle if last_decayed_at is None else max(anchor + idle, last_decayed_at)
    elapsed_days = (now - start).total_seconds() / 86_400
    if elapsed_days <= 0:
        return None
    return max(MIN_SALIENCE, salience * 2 ** (-elapsed_days / half_life_days))


def decay_plan(*, now: datetime, scope: str | None = None) -> list[DecayChange]:
    idle = timedelta(days=settings.SLOWAVE_DECAY_IDLE_DAYS)
    half_life = settings.SLOWAVE_DECAY_HALF_LIFE_DAYS
    if half_life <= 0:  # no half-life configured: decay is switched off
        return []
    rows = scoped(Memory.objects.filter(status__in=DECAYING, created_at__lte=now - idle), scope)
    plan: list[DecayChange] = []
    candidates = list(
        rows.order_by("pk").values_list("pk", "salience", "created_at", "last_decayed_at")
    )
    for chunk in chunks(candidates):
        refs = [memory_ref(pk) for pk, *_ in chunk]
        shown = _latest(Exposure.objects.all(), "exposed_at", refs)
        used = _latest(
            FeedbackEvent.objects.filter(status=FeedbackEvent.Status.ACCEPTED, assessment="used"),
            "created_at",
            refs,
        )
        for pk, salience, created_at, last_decayed_at in chunk:
            ref = memory_ref(pk)
            anchor = max(t for t in (created_at, shown.get(ref), used.get(ref)) if t is not None)
            new = decayed_salience(
                salience=salience,
                anchor=anchor,
                last_decayed_at=last_decayed_at,
                now=now,
                idle=idle,
                half_life_days=half_life,
            )
            if new is not None:
                plan.append(DecayChange(pk, salience, new, last_decayed_at))
    return plan


def memories_decay(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    decayed = 0
    for chunk in chunks(decay_plan(now=now, scope=scope), 500):
        with transaction.atomic():
            for change in chunk:
                # Conditional on the values the plan read: a concurrent change is not overwritten.
                decayed += Memory.objects.filter(
                    pk=change.memory_id,
                    salience=change.salience,
                    last_decayed_at=change.last_decayed_at,
                ).update(salience=change.new_salience, last_decayed_at=now)
    return {"decayed": decayed}

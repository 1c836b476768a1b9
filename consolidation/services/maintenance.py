"""Passes 6, 7 and 10 (spec §8.3): reinforcement catch-up, exact-duplicate archival, idle reaper;
and the lexical indexes' upkeep.

The rules themselves live in memory.services (reinforcement §8.2, reaper §6.8); these bodies only
find the rows that still need them.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from django.db import transaction
from django.db.models import Count

from consolidation.services.common import chunks, scoped
from memory import lexical
from memory.models import FeedbackEvent, LearningApplication, Memory, Prototype, Support
from memory.services.reaping import session_reap_idle
from memory.services.reinforcement import Applied, reinforce_target


def feedback_reinforce(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    """Apply §8.2 to every (retrieval, memory) whose latest accepted row is not yet in the ledger.

    Live feedback is applied in its own transaction, so this normally finds nothing; it catches
    rows written by other paths (imports, a crash between append and apply)."""
    accepted = scoped(
        FeedbackEvent.objects.filter(status=FeedbackEvent.Status.ACCEPTED, target_kind="memory"),
        scope,
        "retrieval__scope",
    )
    if since is not None:
        accepted = accepted.filter(created_at__gte=since)
    retrievals = sorted(set(accepted.values_list("retrieval_id", flat=True)))
    applied = Applied()
    for chunk in chunks(retrievals):
        latest: dict[tuple[str, str], FeedbackEvent] = {}
        rows = FeedbackEvent.objects.filter(
            retrieval_id__in=chunk, status=FeedbackEvent.Status.ACCEPTED, target_kind="memory"
        ).order_by("created_at", "pk")
        for row in rows:
            latest[(row.retrieval_id, row.target_id)] = row
        ledger = dict(
            ((r, t), e)
            for r, t, e in LearningApplication.objects.filter(
                retrieval_id__in=chunk, target_kind="memory"
            ).values_list("retrieval_id", "target_id", "applied_event_id")
        )
        for key, row in sorted(latest.items()):
            if ledger.get(key) != row.pk:
                with transaction.atomic():
                    reinforce_target(row=row, applied=applied)
    return cast("dict[str, int]", applied.as_dict())  # AppliedOut: four counts


def duplicates_archive(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    """Same (scope, normalized_hash) among active memories: keep the oldest, archive the others.

    The partial unique index on active (scope, hash) keeps new data from ever needing this; it is
    here for rows that reached the database another way (older schemas, bulk loads)."""
    groups = (
        scoped(Memory.objects.filter(status=Memory.Status.ACTIVE), scope)
        .values("scope", "normalized_hash")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .order_by("scope", "normalized_hash")
    )
    archived = moved = 0
    for group in groups:
        keeper, *others = Memory.objects.filter(
            status=Memory.Status.ACTIVE,
            scope=group["scope"],
            normalized_hash=group["normalized_hash"],
        ).order_by("created_at", "pk")
        for duplicate in others:
            with transaction.atomic():
                if (
                    Memory.objects.filter(pk=duplicate.pk, status=Memory.Status.ACTIVE).update(
                        status=Memory.Status.ARCHIVED, duplicate_of=keeper
                    )
                    != 1
                ):
                    continue
                moved += Support.objects.filter(memory=duplicate).update(memory=keeper)
                Prototype.objects.filter(memory=duplicate).update(memory=keeper)
                archived += 1
    return {"archived": archived, "supports_moved": moved}


def sessions_reap(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    """Idle open sessions closed through the commit path; nothing when the timeout is <= 0."""
    return {"reaped": len(session_reap_idle(now=now))}


def lexical_tidy(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    """The lexical indexes merged into one segment each once writes have left several
    (memory.lexical.tidy): a search reads every segment. The whole index, whatever `scope`."""
    with transaction.atomic():
        merged = lexical.tidy()
    return {f"{kind}_segments_merged": n for kind, n in merged.items()}

"""Pass 8, promote_generalization (spec §7.4): raise a memory's stage on cross-scope evidence.

Evidence scopes = the origin scope plus scopes of sessions that gave an accepted `used` (latest
assessment per retrieval, effect not harmed) or created a corroboration/repeat Support; evidence
sessions likewise plus the origin session. Consolidation similarity never counts. Stages are
checked 3 -> 1, scope floors are capped at the number of scopes active in the last 90 days, and a
stage never drops here. Evidence crosses scopes by nature, so the pass ignores `scope`: it checks
memories touched since `since`, and all of them when `since` is None (the daily full sweep).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q

from consolidation.services.common import chunks
from memory.ids import memory_pk, memory_ref
from memory.models import FeedbackEvent, Memory, Session, Support

ACTIVE_WINDOW = timedelta(days=90)
# (stage, scopes >=, breadth >=, sessions (+ kind bonus from stage 2) >=), checked highest first.
STAGES = ((3, 8, 0.78, 5), (2, 4, 0.55, 3), (1, 2, 0.25, 2))
EVIDENCE_SUPPORTS = (Support.Kind.CORROBORATION, Support.Kind.REPEAT)


@dataclass
class Evidence:
    scopes: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)

    @property
    def kind_bonus(self) -> int:
        return 1 if len({s.partition(":")[0] for s in self.scopes}) >= 2 else 0


def stage_for(evidence: Evidence, active_scopes: int) -> int:
    active = max(1, active_scopes)
    breadth = len(evidence.scopes) / active
    for stage, min_scopes, min_breadth, min_sessions in STAGES:
        bonus = evidence.kind_bonus if stage >= 2 else 0
        if (
            len(evidence.scopes) >= min(min_scopes, active)
            and breadth >= min_breadth
            and len(evidence.sessions) + bonus >= min_sessions
        ):
            return stage
    return 0


def _candidates(since: datetime | None) -> list[int]:
    supports = Support.objects.filter(kind__in=EVIDENCE_SUPPORTS)
    used = FeedbackEvent.objects.filter(
        status=FeedbackEvent.Status.ACCEPTED, target_kind="memory", assessment="used"
    )
    if since is not None:
        supports, used = supports.filter(created_at__gte=since), used.filter(created_at__gte=since)
    ids = set(supports.values_list("memory_id", flat=True))
    ids |= {
        pk
        for pk in (memory_pk(t) for t in used.values_list("target_id", flat=True).distinct())
        if pk
    }
    return sorted(ids)


def _evidence(memories: list[Memory]) -> dict[int, Evidence]:
    found = {
        m.pk: Evidence({m.scope}, {m.source_session_id} if m.source_session_id else set())
        for m in memories
    }
    for memory_id, scope, session_id in Support.objects.filter(
        memory_id__in=list(found), kind__in=EVIDENCE_SUPPORTS
    ).values_list("memory_id", "scope", "session_id"):
        found[memory_id].scopes.add(scope)
        if session_id:
            found[memory_id].sessions.add(session_id)
    latest: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    rows = FeedbackEvent.objects.filter(
        status=FeedbackEvent.Status.ACCEPTED,
        target_kind="memory",
        target_id__in=[memory_ref(pk) for pk in found],
    ).order_by("created_at", "pk")
    for retrieval_id, target_id, assessment, effect, scope, session_id in rows.values_list(
        "retrieval_id",
        "target_id",
        "assessment",
        "effect",
        "retrieval__scope",
        "retrieval__session_id",
    ):
        latest[(retrieval_id, target_id)] = (assessment, effect, scope, session_id)
    for (_, target_id), (assessment, effect, scope, session_id) in latest.items():
        if assessment == "used" and effect != "harmed":
            pk = memory_pk(target_id)
            assert pk is not None  # target_id was filtered on memory_ref() of known pks
            found[pk].scopes.add(scope)
            found[pk].sessions.add(session_id)
    return found


def generalization_promote(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    active_scopes = (
        Session.objects.filter(last_activity_at__gte=now - ACTIVE_WINDOW)
        .values("scope")
        .distinct()
        .count()
    )
    counts = {
        "promoted": 0,
        "stage_1": 0,
        "stage_2": 0,
        "stage_3": 0,
        "full_sweep": int(since is None),
    }
    for chunk in chunks(_candidates(since), 400):
        memories = list(
            Memory.objects.filter(
                pk__in=chunk, status=Memory.Status.ACTIVE, generalization_stage__lt=3
            )
        )
        evidence = _evidence(memories)
        for memory in memories:
            stage = stage_for(evidence[memory.pk], active_scopes)
            if stage <= memory.generalization_stage:
                continue
            with transaction.atomic():
                raised = Memory.objects.filter(
                    Q(generalization_stage__lt=stage), pk=memory.pk, status=Memory.Status.ACTIVE
                ).update(generalization_stage=stage)
            if raised:
                counts["promoted"] += 1
                counts[f"stage_{stage}"] += 1
    return counts

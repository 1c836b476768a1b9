"""Pass 5, maintain_associations (spec §8.3): semantic, temporal and co-occurrence edges.

- semantic: each memory's top-5 same-scope neighbours with cosine >= 0.60, weight = cosine;
- temporal: memories of adjacent remembers in a session, or of adjacent episodes, weight 0.50;
- cooccurrence: memories both accepted as `used` in one session, weight min(1, 0.25 x sessions).
Edges are stored once per unordered pair and kind (src < dst) and upserted with the weight the
data implies, so re-running over the same rows changes nothing. Cross-scope edges need both ends
at generalization stage >= 1. Incremental: only memories, sessions and feedback newer than
`since` are examined (stage >= 1 memories always, so a promotion gains its cross-scope edges).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from itertools import combinations

from django.db import transaction
from django.db.models import Q

from consolidation.services.common import chunks, scoped
from memory import embeddings
from memory.ids import memory_pk
from memory.models import Association, Episode, Event, FeedbackEvent, Memory, Session, Support
from memory.vectors import get_index

SEMANTIC_K = 5
SEMANTIC_COSINE = 0.60
TEMPORAL_WEIGHT = 0.50
COOCCURRENCE_STEP = 0.25
KNN_SLACK = 10  # extra neighbours fetched so that filtering out inactive rows still leaves five

Edges = dict[tuple[int, int, str], float]


def _add(edges: Edges, a: int, b: int, kind: str, weight: float) -> None:
    if a != b:
        key = (min(a, b), max(a, b), kind)
        edges[key] = round(min(1.0, max(0.0, weight)), 4)


def associations_maintain(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    edges: Edges = {}
    _semantic(edges, scope, since)
    sessions = _sessions_ended(scope, since)
    _temporal(edges, sessions)
    _cooccurrence(edges, scope, since)
    _drop_cross_scope(edges)
    return _upsert(edges, now)


def _semantic(edges: Edges, scope: str | None, since: datetime | None) -> None:
    fresh = Q() if since is None else Q(embedded_at__gte=since) | Q(generalization_stage__gte=1)
    rows = scoped(
        Memory.objects.filter(fresh, status=Memory.Status.ACTIVE, embedding__isnull=False), scope
    )
    promoted_scopes = sorted(
        set(
            Memory.objects.filter(
                status=Memory.Status.ACTIVE, generalization_stage__gte=1
            ).values_list("scope", flat=True)
        )
    )
    for pk, mem_scope, stage, blob in rows.order_by("pk").values_list(
        "pk", "scope", "generalization_stage", "embedding"
    ):
        scopes = (
            [mem_scope, *(s for s in promoted_scopes if s != mem_scope)]
            if stage >= 1
            else [mem_scope]
        )
        hits = [
            (other, cos)
            for other, cos in get_index().knn(
                "memory", embeddings.known_vector(blob), SEMANTIC_K + KNN_SLACK, scopes
            )
            if other != pk and cos >= SEMANTIC_COSINE
        ]
        active = set(
            Memory.objects.filter(
                pk__in=[o for o, _ in hits], status=Memory.Status.ACTIVE
            ).values_list("pk", flat=True)
        )
        for other, cos in [h for h in hits if h[0] in active][:SEMANTIC_K]:
            _add(edges, pk, other, Association.Kind.SEMANTIC, cos)


def _sessions_ended(scope: str | None, since: datetime | None) -> list[str]:
    ended = scoped(Session.objects.filter(episodes_state=Session.EpisodesState.FORMED), scope)
    if since is None:
        return list(ended.order_by("pk").values_list("pk", flat=True))
    recent = set(ended.filter(ended_at__gte=since).values_list("pk", flat=True))
    # Sessions ended long ago whose episodes were only formed now (by pass 1, after a crash).
    fresh = Episode.objects.filter(recorded_at__gte=since)
    recent |= set(scoped(fresh, scope).values_list("session_id", flat=True))
    # Episodes that newly back a consolidated memory make their neighbours adjacent to it.
    recent |= set(
        scoped(
            Support.objects.filter(kind=Support.Kind.CONSOLIDATED_MEMBER, created_at__gte=since),
            scope,
        ).values_list("session_id", flat=True)
    )
    return sorted(recent)


def _temporal(edges: Edges, sessions: list[str]) -> None:
    for session_id in sessions:
        remembered = _remembered_in_order(session_id)
        for a, b in zip(remembered, remembered[1:], strict=False):
            _add(edges, a, b, Association.Kind.TEMPORAL, TEMPORAL_WEIGHT)
        episodes = list(
            Episode.objects.filter(session_id=session_id)
            .order_by("first_event__seq")
            .values_list("pk", flat=True)
        )
        backing = _memories_by_episode(episodes)
        for first, second in zip(episodes, episodes[1:], strict=False):
            for a in backing.get(first, ()):
                for b in backing.get(second, ()):
                    _add(edges, a, b, Association.Kind.TEMPORAL, TEMPORAL_WEIGHT)


def _remembered_in_order(session_id: str) -> list[int]:
    """Memory behind each remember event of the session, in event order (created or matched)."""
    events = list(
        Event.objects.filter(session_id=session_id, kind=Event.Kind.REMEMBER)
        .order_by("seq")
        .values_list("pk", flat=True)
    )
    behind: dict[int, int] = {}
    for chunk in chunks(events):
        behind.update(
            Memory.objects.filter(source_event_id__in=chunk).values_list("source_event_id", "pk")
        )
        behind.update(
            Support.objects.filter(event_id__in=chunk, kind=Support.Kind.REPEAT).values_list(
                "event_id", "memory_id"
            )
        )
    return [behind[e] for e in events if e in behind]


def _memories_by_episode(episodes: list[int]) -> dict[int, list[int]]:
    backing: dict[int, set[int]] = {}
    for chunk in chunks(episodes):
        for episode_id, memory_id in Support.objects.filter(episode_id__in=chunk).values_list(
            "episode_id", "memory_id"
        ):
            backing.setdefault(episode_id, set()).add(memory_id)
    return {episode: sorted(memories) for episode, memories in backing.items()}


def _used_sessions(rows: Iterable[tuple[str, str, str, str]]) -> dict[int, set[str]]:
    """memory pk -> sessions where its latest accepted assessment in some retrieval is `used`."""
    latest: dict[tuple[str, str], tuple[str, str]] = {}
    for retrieval_id, session_id, target_id, assessment in rows:  # ordered oldest first
        latest[(retrieval_id, target_id)] = (session_id, assessment)
    used: dict[int, set[str]] = {}
    for (_, target_id), (session_id, assessment) in latest.items():
        pk = memory_pk(target_id)
        if assessment == "used" and pk is not None:
            used.setdefault(pk, set()).add(session_id)
    return used


def _accepted(**filters: object):
    return (
        FeedbackEvent.objects.filter(
            status=FeedbackEvent.Status.ACCEPTED, target_kind="memory", **filters
        )
        .order_by("created_at", "pk")
        .values_list("retrieval_id", "retrieval__session_id", "target_id", "assessment")
    )


def _cooccurrence(edges: Edges, scope: str | None, since: datetime | None) -> None:
    touched = _accepted() if since is None else _accepted(created_at__gte=since)
    sessions = sorted(
        set(
            scoped(touched, scope, "retrieval__scope").values_list(
                "retrieval__session_id", flat=True
            )
        )
    )
    pairs: set[tuple[int, int]] = set()
    for chunk in chunks(sessions):
        by_session: dict[str, set[int]] = {}
        for memory, used_in in _used_sessions(_accepted(retrieval__session_id__in=chunk)).items():
            for session_id in used_in:
                by_session.setdefault(session_id, set()).add(memory)
        for members in by_session.values():
            pairs.update(combinations(sorted(members), 2))
    involved = sorted({m for pair in pairs for m in pair})
    used: dict[int, set[str]] = {}
    for chunk in chunks([f"sch_{pk}" for pk in involved]):
        for memory, used_in in _used_sessions(_accepted(target_id__in=chunk)).items():
            used.setdefault(memory, set()).update(used_in)
    for a, b in sorted(pairs):
        count = len(used.get(a, set()) & used.get(b, set()))
        if count:
            _add(edges, a, b, Association.Kind.COOCCURRENCE, COOCCURRENCE_STEP * count)


def _drop_cross_scope(edges: Edges) -> None:
    ids = sorted({pk for src, dst, _ in edges for pk in (src, dst)})
    info: dict[int, tuple[str, int]] = {}
    for chunk in chunks(ids):
        info.update(
            {
                pk: (s, st)
                for pk, s, st in Memory.objects.filter(pk__in=chunk).values_list(
                    "pk", "scope", "generalization_stage"
                )
            }
        )
    for key in list(edges):
        (scope_a, stage_a), (scope_b, stage_b) = info[key[0]], info[key[1]]
        if scope_a != scope_b and min(stage_a, stage_b) < 1:
            del edges[key]


def _upsert(edges: Edges, now: datetime) -> dict[str, int]:
    counts = {
        f"{kind}_{what}": 0 for kind in Association.Kind.values for what in ("created", "updated")
    }
    sources = sorted({src for src, _, _ in edges})
    existing: dict[tuple[int, int, str], tuple[int, float]] = {}
    for chunk in chunks(sources):
        for pk, src, dst, kind, weight in Association.objects.filter(src_id__in=chunk).values_list(
            "pk", "src_id", "dst_id", "kind", "weight"
        ):
            existing[(src, dst, kind)] = (pk, weight)
    with transaction.atomic():
        fresh = []
        for (src, dst, kind), weight in sorted(edges.items()):
            if (src, dst, kind) not in existing:
                fresh.append(
                    Association(src_id=src, dst_id=dst, kind=kind, weight=weight, updated_at=now)
                )
                counts[f"{kind}_created"] += 1
            elif abs(existing[(src, dst, kind)][1] - weight) > 1e-9:
                Association.objects.filter(pk=existing[(src, dst, kind)][0]).update(
                    weight=weight, updated_at=now
                )
                counts[f"{kind}_updated"] += 1
        Association.objects.bulk_create(fresh, batch_size=500)
    return counts

"""Pass 3, cluster_prototypes (spec §8.3): group episode embeddings into prototypes per scope.

Per scope, unassigned episodes in id order first join the nearest existing prototype (cosine >=
0.80, centroid updated as they join); up to 2,000 of the rest are clustered (average-linkage,
cosine distance 0.25) and every cluster, singletons too, becomes a new prototype. The maths is in
consolidation.clustering; this module reads, calls it, and writes one transaction per scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection, transaction

from consolidation import clustering
from consolidation.services.common import chunks, scoped
from memory.embeddings import DIMENSIONS, known_vector, to_blob
from memory.indexing import index_prototype
from memory.models import Episode, Prototype


@dataclass
class _Unassigned:
    ids: list[int]
    sessions: list[str]
    vectors: np.ndarray


def _unassigned(scope: str) -> _Unassigned:
    rows = Episode.objects.filter(
        scope=scope, prototype__isnull=True, embedding__isnull=False
    ).order_by("pk")
    ids, sessions, vectors = [], [], []
    for pk, session_id, blob in rows.values_list("pk", "session_id", "embedding").iterator(
        chunk_size=2000
    ):
        ids.append(pk)
        sessions.append(session_id)
        vectors.append(known_vector(blob))
    matrix = np.vstack(vectors) if vectors else np.zeros((0, DIMENSIONS), dtype=np.float32)
    return _Unassigned(ids, sessions, matrix)


def prototypes_cluster(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    pending = scoped(Episode.objects.filter(prototype__isnull=True, embedding__isnull=False), scope)
    counts = {"assigned": 0, "created": 0, "clustered": 0, "deferred": 0}
    for name in sorted(set(pending.values_list("scope", flat=True).distinct())):
        for key, value in _cluster_scope(name, now).items():
            counts[key] += value
    return counts


def _cluster_scope(scope: str, now: datetime) -> dict[str, int]:
    episodes = _unassigned(scope)
    existing = list(
        Prototype.objects.filter(scope=scope)
        .order_by("pk")
        .values_list("pk", "vector_sum", "support_count")
    )
    sums = (
        np.vstack([known_vector(blob) for _, blob, _ in existing])
        if existing
        else np.zeros((0, DIMENSIONS))
    )
    assignment = clustering.assign_incremental(
        episodes.vectors, sums, np.array([c for _, _, c in existing])
    )
    rest = assignment.rest[: clustering.MAX_NEW_PER_PASS]
    groups = (
        [[rest[i] for i in group] for group in clustering.cluster(episodes.vectors[rest])]
        if rest
        else []
    )
    with transaction.atomic():
        pairs = [
            (existing[position][0], episodes.ids[row])
            for row, position in assignment.joined.items()
        ]
        created = _create_all(scope, groups, episodes, now)
        for prototype, group in zip(created, groups, strict=True):
            pairs += [(prototype.pk, episodes.ids[row]) for row in group]
        _attach(pairs)
        touched = _refresh_joined(scope, existing, assignment, now)
        for prototype in [*touched, *created]:
            index_prototype(prototype=prototype)
    return {
        "assigned": len(assignment.joined),
        "created": len(created),
        "clustered": len(rest),
        "deferred": len(assignment.rest) - len(rest),
    }


def _refresh_joined(
    scope: str, existing: list, assignment: clustering.Assignment, now: datetime
) -> list[Prototype]:
    """New sum, count and centroid of each prototype that gained members; medoid over all."""
    positions = sorted(set(assignment.joined.values()))
    members = _members([existing[p][0] for p in positions])
    touched = []
    for position in positions:
        pk = existing[position][0]
        total = assignment.sums[position]
        centroid = clustering.normalise(total)[0]
        ids, sessions, vectors = members[pk]
        fields = {
            "vector_sum": to_blob(total),
            "centroid": to_blob(centroid),
            "support_count": int(assignment.counts[position]),
            "medoid_episode_id": ids[clustering.medoid(np.vstack(vectors), centroid, ids)],
            "session_count": len(set(sessions)),
            "updated_at": now,
        }
        Prototype.objects.filter(pk=pk).update(**fields)
        touched.append(Prototype(pk=pk, scope=scope, **fields))
    return touched


def _members(prototype_ids: list[int]) -> dict[int, tuple[list[int], list[str], list[np.ndarray]]]:
    """prototype id -> (episode ids, session ids, vectors) of all its members, in id order."""
    found: dict[int, tuple[list[int], list[str], list[np.ndarray]]] = {
        pk: ([], [], []) for pk in prototype_ids
    }
    for chunk in chunks(prototype_ids):
        rows = Episode.objects.filter(prototype_id__in=chunk).order_by("pk")
        for prototype_id, pk, session_id, blob in rows.values_list(
            "prototype_id", "pk", "session_id", "embedding"
        ):
            ids, sessions, vectors = found[prototype_id]
            ids.append(pk)
            sessions.append(session_id)
            vectors.append(known_vector(blob))
    return found


def _create_all(
    scope: str, groups: list[list[int]], episodes: _Unassigned, now: datetime
) -> list[Prototype]:
    fresh = []
    for rows in groups:
        vectors = episodes.vectors[rows]
        total = vectors.astype(np.float64).sum(axis=0)
        centroid = clustering.normalise(total)[0]
        ids = [episodes.ids[r] for r in rows]
        fresh.append(
            Prototype(
                scope=scope,
                centroid=to_blob(centroid),
                vector_sum=to_blob(total),
                support_count=len(rows),
                session_count=len({episodes.sessions[r] for r in rows}),
                medoid_episode_id=ids[clustering.medoid(vectors, centroid, ids)],
                created_at=now,
                updated_at=now,
            )
        )
    # One INSERT per batch instead of per prototype: most clusters are small, so there are many.
    return Prototype.objects.bulk_create(fresh, batch_size=500)


def _attach(pairs: list[tuple[int, int]]) -> None:
    """(prototype id, episode id) links, only onto episodes still unassigned."""
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {Episode._meta.db_table} SET prototype_id = %s "
            "WHERE id = %s AND prototype_id IS NULL",
            pairs,
        )

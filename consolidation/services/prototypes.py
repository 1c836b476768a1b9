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
from django.db import transaction

from consolidation import clustering
from consolidation.services.common import chunks, scoped
from memory.embeddings import DIMENSIONS, from_blob, to_blob
from memory.models import Episode, Prototype
from memory.vectors import get_index


@dataclass
class _Unassigned:
    ids: list[int]
    sessions: list[str]
    vectors: np.ndarray


def _unassigned(scope: str) -> _Unassigned:
    rows = Episode.objects.filter(scope=scope, prototype__isnull=True, embedding__isnull=False).order_by("pk")
    ids, sessions, vectors = [], [], []
    for pk, session_id, blob in rows.values_list("pk", "session_id", "embedding").iterator(chunk_size=2000):
        ids.append(pk)
        sessions.append(session_id)
        vectors.append(from_blob(blob))
    matrix = np.vstack(vectors) if vectors else np.zeros((0, DIMENSIONS), dtype=np.float32)
    return _Unassigned(ids, sessions, matrix)


def prototypes_cluster(*, now: datetime, scope: str | None = None, since: datetime | None = None) -> dict[str, int]:
    pending = scoped(Episode.objects.filter(prototype__isnull=True, embedding__isnull=False), scope)
    counts = {"assigned": 0, "created": 0, "clustered": 0, "deferred": 0}
    for name in sorted(set(pending.values_list("scope", flat=True).distinct())):
        for key, value in _cluster_scope(name, now).items():
            counts[key] += value
    return counts


def _cluster_scope(scope: str, now: datetime) -> dict[str, int]:
    episodes = _unassigned(scope)
    existing = list(Prototype.objects.filter(scope=scope).order_by("pk").values_list("pk", "vector_sum", "support_count"))
    sums = np.vstack([from_blob(blob) for _, blob, _ in existing]) if existing else np.zeros((0, DIMENSIONS))
    assignment = clustering.assign_incremental(episodes.vectors, sums, np.array([c for _, _, c in existing]))
    rest = assignment.rest[: clustering.MAX_NEW_PER_PASS]
    groups = clustering.cluster(episodes.vectors[rest]) if rest else []
    with transaction.atomic():
        touched = _write_joins(scope, existing, assignment, episodes, now)
        created = [_create(scope, [rest[i] for i in group], episodes, now) for group in groups]
        for prototype in [*touched, *created]:
            get_index().upsert("prototype", prototype.pk, scope, from_blob(prototype.centroid))
    return {"assigned": len(assignment.joined), "created": len(created), "clustered": len(rest),
            "deferred": len(assignment.rest) - len(rest)}


def _write_joins(scope: str, existing: list, assignment: clustering.Assignment, episodes: _Unassigned,
                 now: datetime) -> list[Prototype]:
    members: dict[int, list[int]] = {}
    for row, position in assignment.joined.items():
        members.setdefault(position, []).append(episodes.ids[row])
    touched = []
    for position, episode_ids in sorted(members.items()):
        pk = existing[position][0]
        _attach(episode_ids, pk)
        total = assignment.sums[position]
        centroid = clustering.normalise(total)[0]
        member_rows = list(Episode.objects.filter(prototype_id=pk).order_by("pk").values_list("pk", "session_id", "embedding"))
        medoid_at = clustering.medoid(np.vstack([from_blob(b) for _, _, b in member_rows]), centroid,
                                      [m for m, _, _ in member_rows])
        fields = {"vector_sum": to_blob(total), "centroid": to_blob(centroid),
                  "support_count": int(assignment.counts[position]), "medoid_episode_id": member_rows[medoid_at][0],
                  "session_count": len({s for _, s, _ in member_rows}), "updated_at": now}
        Prototype.objects.filter(pk=pk).update(**fields)
        touched.append(Prototype(pk=pk, scope=scope, **fields))
    return touched


def _create(scope: str, rows: list[int], episodes: _Unassigned, now: datetime) -> Prototype:
    vectors = episodes.vectors[rows]
    total = vectors.astype(np.float64).sum(axis=0)
    centroid = clustering.normalise(total)[0]
    ids = [episodes.ids[r] for r in rows]
    prototype = Prototype.objects.create(
        scope=scope, centroid=to_blob(centroid), vector_sum=to_blob(total), support_count=len(rows),
        session_count=len({episodes.sessions[r] for r in rows}),
        medoid_episode_id=ids[clustering.medoid(vectors, centroid, ids)], created_at=now, updated_at=now,
    )
    _attach(ids, prototype.pk)
    return prototype


def _attach(episode_ids: list[int], prototype_id: int) -> None:
    for chunk in chunks(episode_ids):
        Episode.objects.filter(pk__in=chunk, prototype__isnull=True).update(prototype_id=prototype_id)

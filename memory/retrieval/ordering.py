"""Admission margin and final order of ranked memories (spec §7.5 steps 2-3)."""

from __future__ import annotations

from typing import Any

import numpy as np

from memory import embeddings
from memory.models import Memory

DUPLICATE_COSINE = 0.97
Item = Any  # engine.Scored: .obj (a Memory), .score, .vector, .facet_topical


def current_line(item: Item) -> str | None:
    """An item's text if it is current; None for a stale one, which may not lead."""
    return item.obj.content if item.obj.status == Memory.Status.ACTIVE else None


def apply_margin(items: list[Item], n_facets: int, margin: float) -> list[Item]:
    """Activate only: per facet, keep items within `margin` of that facet's best topical."""
    best = [max((it.facet_topical[i] for it in items), default=0.0) for i in range(n_facets)]
    return [
        it for it in items if any(it.facet_topical[i] >= best[i] - margin for i in range(n_facets))
    ]


def order(items: list[Item]) -> list[Item]:
    """Current items by score (ties: salience, then id), each stale item after its replacement
    or else last; an item nearly identical to one placed above it is dropped."""
    key = lambda it: (-it.score, -it.obj.salience, it.obj.pk)  # noqa: E731
    current = sorted((it for it in items if it.obj.status == Memory.Status.ACTIVE), key=key)
    historical = sorted((it for it in items if it.obj.status == Memory.Status.STALE), key=key)
    ordered: list[Item] = []
    kept_vectors = _Kept(len(items))
    placed = {it.obj.pk: it for it in current}
    followers: dict[int, list[Item]] = {}
    orphans: list[Item] = []
    for it in historical:
        if it.obj.superseded_by_id in placed:
            followers.setdefault(it.obj.superseded_by_id, []).append(it)
        else:
            orphans.append(it)
    for it in current:
        for candidate in [it, *followers.get(it.obj.pk, [])]:
            if _near_duplicate(candidate, kept_vectors):
                continue
            ordered.append(candidate)
            kept_vectors.add(candidate.vector)
    for it in orphans:
        if not _near_duplicate(it, kept_vectors):
            ordered.append(it)
    return ordered


class _Kept:
    """Vectors already placed, in one preallocated matrix (no restacking per candidate)."""

    def __init__(self, capacity: int) -> None:
        self.rows = np.zeros((max(capacity, 1), embeddings.DIMENSIONS), dtype=np.float32)
        self.count = 0

    def add(self, vector: np.ndarray | None) -> None:
        if vector is not None:
            self.rows[self.count] = vector
            self.count += 1


def _near_duplicate(item: Item, kept: _Kept) -> bool:
    if item.vector is None or not kept.count:
        return False
    return bool(np.max(kept.rows[: kept.count] @ item.vector) >= DUPLICATE_COSINE)

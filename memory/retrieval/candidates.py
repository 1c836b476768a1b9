"""Candidate gathering: dense and lexical pools per facet over eligible scopes (spec §7.1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

import numpy as np

from memory import lexical, passages
from memory.engines import storage_engine
from memory.models import Episode, Memory, Session
from memory.retrieval.policy import Candidates
from memory.text import tokens
from memory.vectors import get_index

ELIGIBLE_STATUSES = (Memory.Status.ACTIVE, Memory.Status.STALE)


@dataclass
class Pool:
    """Ranks (1-based) of the ids each channel returned for one facet."""

    dense: dict[int, int]
    lexical: dict[int, int]
    capped: bool
    # Memories the cue found once its speaker names were left out: scored and admitted like the
    # others, but with no channel rank to fuse.
    related: set[int] = field(default_factory=set)
    # Each channel's own score of what it returned, over its best (magnitude fusion, 0..1).
    dense_share: dict[int, float] = field(default_factory=dict)
    lexical_share: dict[int, float] = field(default_factory=dict)

    @property
    def ids(self) -> set[int]:
        return set(self.dense) | set(self.lexical) | self.related


@dataclass(slots=True)
class MemoryRow:
    """The columns ranking and rendering read; far cheaper to load than model instances. The
    field order is the engine's `memory_rows` (memory/engines/ranking.py)."""

    pk: int
    type: str
    content: str
    scope: str
    status: str
    origin: str
    generalization_stage: int
    salience: float
    superseded_by_id: int | None
    occurred_at: datetime | None
    created_at: datetime
    provenance: dict[str, Any]
    embedding: bytes | None
    passages: bytes | None
    # Where the memory was remembered: its session and the remember event's seq (context).
    session_id: str | None = None
    seq: int | None = None

    @property
    def position(self) -> tuple[str, int] | None:
        # A memory with a source session has a source event, and so a seq.
        return (self.session_id, cast(int, self.seq)) if self.session_id is not None else None


def load_memories(ids: set[int]) -> list[MemoryRow]:
    """The eligible memories among `ids`, in one statement the engine runs (a hand-written
    one: building the ORM query cost more than running it, twice per recall)."""
    rows = storage_engine().memory_rows(sorted(ids), ELIGIBLE_STATUSES)
    return [MemoryRow(*row) for row in rows]


@dataclass(slots=True)
class EpisodeRow:
    pk: int
    session_id: str
    content: str
    recorded_at: datetime
    occurred_at: datetime | None
    salience: float
    embedding: bytes | None
    # The episode's place in its session (0 first), when loaded with it (history.py).
    ordinal: int | None = None

    @property
    def position(self) -> tuple[str, int] | None:
        """(session, ordinal): what recall's session signals read (context.py), as a
        memory's (session, seq)."""
        return None if self.ordinal is None else (self.session_id, self.ordinal)


EPISODE_FIELDS = (
    "pk",
    "session_id",
    "content",
    "recorded_at",
    "occurred_at",
    "salience",
    "embedding",
)


def load_episodes(ids: set[int], scope: str, *, imported_only: bool = False) -> list[EpisodeRow]:
    """`imported_only`: episodes of imported sessions alone (the history ranked with memories)."""
    rows = Episode.objects.filter(pk__in=ids, scope=scope)
    if imported_only:
        rows = rows.filter(session__ended_by=Session.EndedBy.IMPORT)
    return [EpisodeRow(*row) for row in rows.values_list(*EPISODE_FIELDS)]


def scope_kind(scope: str) -> str:
    return scope.partition(":")[0]


def searchable_scopes(scope: str) -> list[str]:
    """The request scope plus scopes holding promoted memories that may be visible here."""
    promoted = storage_engine().promoted_scopes(scope, ELIGIBLE_STATUSES)
    others = sorted(
        {s for s, stage in promoted if stage >= 2 or scope_kind(s) == scope_kind(scope)}
    )
    return [scope, *others]


def stage_visible(memory: Memory | MemoryRow, scope: str) -> bool:
    if memory.scope == scope:
        return True
    stage = memory.generalization_stage
    if stage == 1:
        return scope_kind(memory.scope) == scope_kind(scope)
    return stage >= 2


def pool_for(
    kind: str, text: str, vector: np.ndarray | None, scopes: list[str], limit: int
) -> Pool:
    nearest = dense_hits(kind, vector, limit, scopes) if vector is not None else []
    lexical_hits = lexical.search(kind, text, scopes, limit)
    return Pool(
        dense={row_id: rank for rank, (row_id, _) in enumerate(nearest, start=1)},
        lexical={row_id: rank for rank, (row_id, _) in enumerate(lexical_hits, start=1)},
        capped=len(nearest) >= limit or len(lexical_hits) >= limit,
        dense_share=_over_best(nearest),
        lexical_share=_over_best(lexical_hits),
    )


def _over_best(hits: list[tuple[int, float]]) -> dict[int, float]:
    """Each hit's score over the best one's (0 when the best is not positive)."""
    best = max((score for _, score in hits), default=0.0)
    if best <= 0:
        return {row_id: 0.0 for row_id, _ in hits}
    return {row_id: max(0.0, score / best) for row_id, score in hits}


def dense_hits(
    kind: str, vector: np.ndarray, limit: int, scopes: list[str]
) -> list[tuple[int, float]]:
    """Nearest rows of a kind. For memories: the union of the `limit` nearest by whole text and
    the owners of the `limit` nearest passages, each at its best cosine (so up to twice `limit`).
    Keeping the union, not its top `limit`, measured LoCoMo recall@20 +0.005 on the tuning
    conversations and +0.005 held out; it costs nothing where no memory has passages."""
    index = get_index()
    hits = index.knn(kind, vector, limit, scopes)
    if kind != "memory":
        return hits
    best = dict(hits)
    for key, cos in index.knn("passage", vector, limit, scopes):
        memory_pk = passages.owner(key)
        if cos > best.get(memory_pk, -2.0):
            best[memory_pk] = cos
    return sorted(best.items(), key=lambda hit: (-hit[1], hit[0]))


def whole_cue_pool(text: str, candidates: Candidates) -> int:
    """The whole cue's pool: deeper for a long, many-part task, so facets past the cap (and
    parts too short to be facets) are found through it."""
    per_term = candidates.whole_cue_pool_per_term * len(set(tokens(text)))
    return min(candidates.whole_cue_pool_max, max(candidates.pool, per_term))

"""Candidate gathering: dense and lexical pools per facet over eligible scopes (spec §7.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory import lexical
from memory.models import Memory
from memory.vectors import get_index

POOL = 50
ELIGIBLE_STATUSES = (Memory.Status.ACTIVE, Memory.Status.STALE)


@dataclass
class Pool:
    """Ranks (1-based) of the ids each channel returned for one facet."""

    dense: dict[int, int]
    lexical: dict[int, int]
    capped: bool


def scope_kind(scope: str) -> str:
    return scope.partition(":")[0]


def searchable_scopes(scope: str) -> list[str]:
    """The request scope plus scopes holding promoted memories that may be visible here."""
    promoted = (
        Memory.objects.filter(generalization_stage__gte=1, status__in=ELIGIBLE_STATUSES)
        .exclude(scope=scope)
        .values_list("scope", "generalization_stage")
        .distinct()
    )
    others = sorted({s for s, stage in promoted if stage >= 2 or scope_kind(s) == scope_kind(scope)})
    return [scope, *others]


def stage_visible(memory: Memory, scope: str) -> bool:
    if memory.scope == scope:
        return True
    stage = memory.generalization_stage
    if stage == 1:
        return scope_kind(memory.scope) == scope_kind(scope)
    return stage >= 2


def scope_factor(memory: Memory, scope: str) -> float:
    return 0.70 if memory.scope != scope and memory.generalization_stage == 2 else 1.0


def pool_for(kind: str, text: str, vector: np.ndarray | None, scopes: list[str]) -> Pool:
    dense_hits = get_index().knn(kind, vector, POOL, scopes) if vector is not None else []
    lexical_hits = lexical.search(kind, text, scopes, POOL)
    return Pool(
        dense={row_id: rank for rank, (row_id, _) in enumerate(dense_hits, start=1)},
        lexical={row_id: rank for rank, (row_id, _) in enumerate(lexical_hits, start=1)},
        capped=len(dense_hits) >= POOL or len(lexical_hits) >= POOL,
    )

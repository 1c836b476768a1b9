"""The `associated` pathway (spec §7.5.4): bounded neighbours of direct items."""

from __future__ import annotations

from memory.engines import storage_engine
from memory.models import Memory
from memory.retrieval.candidates import MemoryRow, load_memories, stage_visible
from memory.retrieval.cosines import topicals_against
from memory.retrieval.policy import RankingPolicy
from memory.retrieval.scored import Cue, Scored


def neighbours(
    memories: list[Scored[MemoryRow]], cue: Cue, policy: RankingPolicy
) -> dict[int, list[tuple[MemoryRow, float, float]]]:
    """parent pk → [(neighbour, edge weight, topical)] for eligible neighbours outside catalog."""
    direct = {it.obj.pk for it in memories}
    if not direct:
        return {}
    best: dict[tuple[int, int], float] = {}
    for src, dst, weight in _edges(direct, policy):
        for parent, other in ((src, dst), (dst, src)):
            if parent in direct and other not in direct:
                key = (parent, other)
                best[key] = max(best.get(key, 0.0), weight)
    others = [
        memory
        for memory in load_memories({other for _, other in best})
        if memory.status == Memory.Status.ACTIVE and stage_visible(memory, cue.scope)
    ]
    topical = topicals_against(cue, others, policy)
    by_pk = {memory.pk: memory for memory in others}
    needed = policy.associations.floor_share * policy.admission.floor
    out: dict[int, list[tuple[MemoryRow, float, float]]] = {}
    for (parent, other), weight in sorted(best.items()):
        if other in by_pk and topical[other] >= needed:
            out.setdefault(parent, []).append((by_pk[other], weight, topical[other]))
    return out


def _edges(pks: set[int], policy: RankingPolicy) -> list[tuple[int, int, float]]:
    # Plain tuples from the engine's statement: a well-connected catalog has a thousand edges,
    # too many to build models for, and building the ORM query cost more than running it.
    return storage_engine().association_edges(sorted(pks), policy.associations.min_edge_weight)

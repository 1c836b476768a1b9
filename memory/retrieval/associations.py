"""The `associated` pathway (spec §7.5.4): bounded neighbours of direct items."""

from __future__ import annotations

from django.db.models import Q

from memory.models import Association, Memory
from memory.retrieval.candidates import MemoryRow, load_memories, stage_visible
from memory.retrieval.engine import Ranking, topicals_against

MIN_EDGE_WEIGHT = 0.50


def neighbours(
    *, ranking: Ranking, scope: str, floor: float
) -> dict[int, list[tuple[MemoryRow, float, float]]]:
    """parent pk → [(neighbour, edge weight, topical)] for eligible neighbours outside catalog."""
    direct = {it.obj.pk: it for it in ranking.memories}
    if not direct or ranking.cue is None:
        return {}
    # Plain tuples: a well-connected catalog has a thousand edges, too many to build models for.
    edges = Association.objects.filter(
        Q(src_id__in=direct) | Q(dst_id__in=direct), weight__gte=MIN_EDGE_WEIGHT
    ).values_list("src_id", "dst_id", "weight")
    best: dict[tuple[int, int], float] = {}
    for src, dst, weight in edges:
        for parent, other in ((src, dst), (dst, src)):
            if parent in direct and other not in direct:
                key = (parent, other)
                best[key] = max(best.get(key, 0.0), weight)
    others = [
        memory
        for memory in load_memories({other for _, other in best})
        if memory.status == Memory.Status.ACTIVE and stage_visible(memory, scope)
    ]
    topical = topicals_against(ranking.cue, others)
    by_pk = {memory.pk: memory for memory in others}
    out: dict[int, list[tuple[MemoryRow, float, float]]] = {}
    for (parent, other), weight in sorted(best.items()):
        if other in by_pk and topical[other] >= 0.5 * floor:
            out.setdefault(parent, []).append((by_pk[other], weight, topical[other]))
    return out

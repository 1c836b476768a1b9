"""The `associated` pathway (spec §7.5.4): bounded neighbours of direct items."""

from __future__ import annotations

from django.db.models import Q

from memory.models import Association, Memory
from memory.retrieval.candidates import stage_visible
from memory.retrieval.engine import Ranking, topical_against

MIN_EDGE_WEIGHT = 0.50


def neighbours(
    *, ranking: Ranking, scope: str, floor: float
) -> dict[int, list[tuple[Memory, float, float]]]:
    """parent pk → [(neighbour, edge weight, topical)] for eligible neighbours outside catalog."""
    direct = {it.obj.pk: it for it in ranking.memories}
    if not direct or ranking.cue is None:
        return {}
    edges = Association.objects.filter(
        Q(src_id__in=direct) | Q(dst_id__in=direct), weight__gte=MIN_EDGE_WEIGHT
    )
    best: dict[tuple[int, int], float] = {}
    for edge in edges:
        for parent, other in ((edge.src_id, edge.dst_id), (edge.dst_id, edge.src_id)):
            if parent in direct and other not in direct:
                key = (parent, other)
                best[key] = max(best.get(key, 0.0), edge.weight)
    others = Memory.objects.in_bulk({other for _, other in best})
    out: dict[int, list[tuple[Memory, float, float]]] = {}
    for (parent, other), weight in sorted(best.items()):
        memory = others.get(other)
        if (
            memory is None
            or memory.status != Memory.Status.ACTIVE
            or not stage_visible(memory, scope)
        ):
            continue
        topical = topical_against(ranking.cue, memory)
        if topical >= 0.5 * floor:
            out.setdefault(parent, []).append((memory, weight, topical))
    return out

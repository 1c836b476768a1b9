"""Row counts per scope kind and status, for the operators' gauges at `/metrics`.

One grouped query per table, read when a scraper asks (never on an agent's call path); scope
kinds are few (`project`, `user`, `repo`...), unlike scopes, so they make bounded labels.
Per-scope figures stay with `scope_stats` (memory.selectors.inspection).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count

from memory.models import Memory, Session


@dataclass(frozen=True)
class KindCount:
    scope_kind: str
    status: str
    count: int


@dataclass(frozen=True)
class ScopeKindCounts:
    memories: list[KindCount]
    sessions: list[KindCount]


def scope_kind_counts() -> ScopeKindCounts:
    """Memories and sessions by (scope kind, status); combinations with no row are absent."""

    def grouped(model: type[Memory] | type[Session]) -> list[KindCount]:
        rows = (
            model.objects.values_list("scope_kind", "status")
            .annotate(n=Count("pk"))
            .order_by("scope_kind", "status")
        )
        return [KindCount(scope_kind=kind, status=status, count=n) for kind, status, n in rows]

    return ScopeKindCounts(memories=grouped(Memory), sessions=grouped(Session))

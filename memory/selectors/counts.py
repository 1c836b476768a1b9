"""Row counts per scope kind and status, for the operators' gauges at `/metrics`.

One grouped query per table, read when a scraper asks (never on an agent's call path). A scope
kind is whatever a caller writes before the colon, so the label takes only the kinds in
`LABELLED_KINDS`; every other kind is counted under `other`, and a caller inventing kinds cannot
grow the number of series.
Per-scope figures stay with `scope_stats` (memory.selectors.inspection).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db.models import Count

from memory.models import Memory, Session

LABELLED_KINDS = frozenset(
    {"project", "user", "repo", "team", "org", "workspace", "agent", "global", "chat"}
)
OTHER_KIND = "other"


def label_kind(kind: str) -> str:
    return kind if kind in LABELLED_KINDS else OTHER_KIND


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
        folded: Counter[tuple[str, str]] = Counter()
        for kind, status, n in rows:
            folded[(label_kind(kind), status)] += n
        return [
            KindCount(scope_kind=kind, status=status, count=n)
            for (kind, status), n in sorted(folded.items())
        ]

    return ScopeKindCounts(memories=grouped(Memory), sessions=grouped(Session))

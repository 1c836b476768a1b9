"""Small helpers shared by the pass services."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

from django.db.models import QuerySet

T = TypeVar("T")
# SQLite caps bound parameters per statement; id lists are sent in slices well under the cap.
CHUNK = 900


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def scoped(queryset: QuerySet, scope: str | None, field: str = "scope") -> QuerySet:
    """The queryset limited to one scope, or unchanged for an unscoped (global) run."""
    return queryset if not scope else queryset.filter(**{field: scope})

"""Small helpers shared by the pass services."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar, cast

import numpy as np
from django.db.models import QuerySet

from memory.embeddings import from_blob

T = TypeVar("T")
# SQLite caps bound parameters per statement; id lists are sent in slices well under the cap.
CHUNK = 900


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def scoped(queryset: QuerySet, scope: str | None, field: str = "scope") -> QuerySet:
    """The queryset limited to one scope, or unchanged for an unscoped (global) run."""
    return queryset if not scope else queryset.filter(**{field: scope})


def known_vector(blob: bytes | memoryview | None) -> np.ndarray:
    """`from_blob` of a vector column read where it is never NULL (NOT NULL, or filtered on
    `isnull=False`); the column's type may still say nullable."""
    return cast(np.ndarray, from_blob(blob))

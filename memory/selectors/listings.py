"""Rows by id and filtered, paged lists: what the REST read routes (`GET /api/...`) show.

A list is newest first and comes with the total before paging, so a client can page on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db.models import Model, QuerySet

from memory.models import Memory, Procedure, Retrieval, Session

RowT = TypeVar("RowT", bound=Model)


@dataclass(frozen=True)
class Listing(Generic[RowT]):
    """One page of rows and how many rows match in all."""

    rows: list[RowT]
    total: int


def _page(qs: QuerySet[RowT], *, limit: int, offset: int) -> Listing[RowT]:
    total = qs.count()
    return Listing(rows=list(qs[offset : offset + limit]), total=total)


def _scoped(qs: QuerySet[RowT], *, scope: str | None, status: str | None) -> QuerySet[RowT]:
    if scope:
        qs = qs.filter(scope=scope)
    if status:
        qs = qs.filter(status=status)
    return qs


def memory_list(
    *,
    scope: str | None = None,
    status: str | None = None,
    memory_type: str | None = None,
    q: str | None = None,
    order: str = "newest",
    limit: int,
    offset: int,
) -> Listing[Memory]:
    """Memories newest first, or most salient first (`order="salience"`, ties newest first:
    what feedback found useful and decay has not worn down); `q` is a case-insensitive
    substring of the content."""
    qs = _scoped(Memory.objects.all(), scope=scope, status=status)
    if memory_type:
        qs = qs.filter(type=memory_type)
    if q:
        qs = qs.filter(content__icontains=q)
    ordering = ("-salience", "-pk") if order == "salience" else ("-pk",)
    return _page(qs.order_by(*ordering), limit=limit, offset=offset)


def session_list(
    *, scope: str | None = None, status: str | None = None, limit: int, offset: int
) -> Listing[Session]:
    qs = _scoped(Session.objects.all(), scope=scope, status=status)
    return _page(qs.order_by("-started_at", "-pk"), limit=limit, offset=offset)


def procedure_list(
    *, scope: str | None = None, status: str | None = None, limit: int, offset: int
) -> Listing[Procedure]:
    qs = _scoped(Procedure.objects.all(), scope=scope, status=status)
    return _page(qs.order_by("-created_at", "-pk"), limit=limit, offset=offset)


def session_get(*, session_id: str) -> Session | None:
    return Session.objects.filter(pk=session_id).first()


def retrieval_get(*, retrieval_id: str) -> Retrieval | None:
    return Retrieval.objects.filter(pk=retrieval_id).first()


def procedure_get(*, procedure_id: str) -> Procedure | None:
    return Procedure.objects.filter(pk=procedure_id).first()

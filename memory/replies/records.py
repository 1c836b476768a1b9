"""Database rows as `memory.selectors.record_of` flattens them: every concrete field by column
name (`session_id`, not `session`), vectors left out, every key always present.

The models are built from the Django models' own fields, so a field added to a model appears
here (and in the OpenAPI document) without a second edit. Routes that rewrite a column (an
integer memory id shown as `sch_N`) say so with `overrides`. To a type checker a record is a
`dict[str, Any]`, as `record_of` returns it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, cast

from django.db import models
from typing_extensions import TypedDict

from memory.models import Episode, Event, ForgetLog, Memory, Procedure, Retrieval, Session
from memory.replies.base import closed

if TYPE_CHECKING:
    from django.db.models.fields.related import RelatedField


def _json_type(field: models.JSONField) -> Any:
    default = field.default() if callable(field.default) else field.default
    if isinstance(default, dict):
        return dict[str, Any]
    if isinstance(default, list):
        return list[Any]
    return Any


def _value_type(field: models.Field) -> Any:
    if field.is_relation:
        return _value_type(cast("RelatedField[Any, Any]", field).target_field)
    if field.choices:
        values = [value for value, _ in field.choices]
        if field.blank and "" not in values:
            values.append("")
        return Literal[tuple(values)]
    if isinstance(field, models.JSONField):
        return _json_type(field)
    for kind, python in (
        (models.BooleanField, bool),
        (models.IntegerField, int),
        (models.FloatField, float),
        (models.DateTimeField, datetime),
        (models.CharField, str),
        (models.TextField, str),
    ):
        if isinstance(field, kind):
            return python
    raise TypeError(f"no reply type for {field.model.__name__}.{field.name} ({type(field)})")


def record_schema(
    model: type[models.Model],
    name: str,
    *,
    exclude: tuple[str, ...] = (),
    overrides: dict[str, Any] | None = None,
    doc: str = "",
) -> Any:
    """The reply shape of `record_of(row)` for rows of `model`, in the same key order: a
    TypedDict class built at runtime, which a type checker cannot see into."""
    overrides = overrides or {}
    fields: dict[str, Any] = {}
    for field in model._meta.concrete_fields:
        if isinstance(field, models.BinaryField) or field.attname in exclude:
            continue
        kind = _value_type(field)
        if field.null:
            kind = kind | None
        fields[field.attname] = overrides.get(field.attname, kind)
    shape = TypedDict(name, fields)  # type: ignore[misc]
    shape.__doc__ = doc or f"A {model.__name__} row: its columns by name."
    return closed(shape)


if TYPE_CHECKING:
    # Built at runtime by record_schema.
    SessionRecord = dict[str, Any]
    EventRecord = dict[str, Any]
    EpisodeRecord = dict[str, Any]
    MemoryRecord = dict[str, Any]
    MemoryRow = dict[str, Any]
    ProcedureRecord = dict[str, Any]
    RetrievalRecord = dict[str, Any]
    ForgetLogRecord = dict[str, Any]
else:
    SessionRecord = record_schema(Session, "SessionRecord")
    EventRecord = record_schema(Event, "EventRecord")
    EpisodeRecord = record_schema(Episode, "EpisodeRecord")
    MemoryRecord = record_schema(
        Memory, "MemoryRecord", overrides={"id": str}, doc="A Memory row; `id` is its sch_N id."
    )
    MemoryRow = record_schema(
        Memory,
        "MemoryRow",
        overrides={"id": str, "superseded_by_id": str | None, "duplicate_of_id": str | None},
        doc="A Memory row as listed: `id`, `superseded_by_id` and `duplicate_of_id` are sch_N ids.",
    )
    ProcedureRecord = record_schema(Procedure, "ProcedureRecord")
    RetrievalRecord = record_schema(Retrieval, "RetrievalRecord", exclude=("catalog",))
    ForgetLogRecord = record_schema(ForgetLog, "ForgetLogRecord")

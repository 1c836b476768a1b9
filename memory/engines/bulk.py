"""Bulk writes of model rows, one statement per batch, without the ORM's query building.

`bulk_create` and `bulk_update` build a query object per call and compile it (expressions,
lookups, a `Case(When(...))` per field and row): on the agent verbs' hot paths that cost a
multiple of the statement itself (a `bulk_update` of ten saliences: ~3 ms of Python for a
0.2 ms UPDATE). `insert` and `update` write the same rows with the same values, converted by
the same fields (`pre_save`, `get_db_prep_save`), as those two would: statements written out
directly, per engine only the batch size and, on PostgreSQL, the CAST its CASE needs.
Does not live here: which rows to write (the services).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, TypeVar, cast

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import AutoField, BigAutoField, Model, SmallAutoField

_AUTO = (AutoField, BigAutoField, SmallAutoField)
M = TypeVar("M", bound=Model)


def insert(objs: Sequence[M]) -> list[M]:
    """INSERT the objects (all of one model), as `bulk_create(objs)` would, and return them;
    an object without a primary key gets the one the database gave it (RETURNING)."""
    objs = list(objs)
    if not objs:
        return objs
    meta = type(objs[0])._meta
    pk = meta.pk
    assert pk is not None
    given = [obj for obj in objs if obj.pk is not None]
    generated = [obj for obj in objs if obj.pk is None]
    if generated and not isinstance(pk, _AUTO):
        raise ValueError(f"{meta.label} rows need their primary key set")
    for group, with_pk in ((given, True), (generated, False)):
        if group:
            _insert(meta, group, with_pk=with_pk)
    return objs


def create(model: type[M], **values: Any) -> M:
    """`model.objects.create(**values)`, through `insert`."""
    return insert([model(**values)])[0]


@functools.lru_cache(maxsize=64)
def _statement(model: type[Model], with_pk: bool, vendor: str) -> tuple[list[Any], str, str, str]:
    """A model's inserted fields, `INSERT INTO t (cols) VALUES`, one row's `(%s, ...)` and the
    RETURNING clause: the same for every insert of the model (its fields are fixed at import)
    on one engine (`vendor`: the quoting is the engine's)."""
    connection = connections[DEFAULT_DB_ALIAS]
    quote, meta = connection.ops.quote_name, cast(Any, model._meta)  # stubs: column may be None
    fields = [
        f
        for f in meta.concrete_fields
        if (with_pk or not f.primary_key) and not getattr(f, "generated", False)
    ]
    columns = ", ".join(quote(f.column) for f in fields)
    prefix = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES "
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    returning = "" if with_pk else f" RETURNING {quote(meta.pk.column)}"
    return fields, prefix, row, returning


def _insert(meta: Any, objs: Sequence[Model], *, with_pk: bool) -> None:
    # The wrapper itself, not django.db.connection's proxy: every field conversion asks it.
    connection = connections[DEFAULT_DB_ALIAS]
    fields, prefix, row, returning = _statement(meta.model, with_pk, connection.vendor)
    size = max(1, connection.ops.bulk_batch_size(fields, objs))
    with connection.cursor() as cursor:
        for start in range(0, len(objs), size):
            batch = objs[start : start + size]
            params: list[Any] = []
            for obj in batch:
                # As bulk_create does: a related object saved since it was set gives its key.
                obj._prepare_related_fields_for_save(  # type: ignore[attr-defined]
                    operation_name="bulk_create"
                )
                for f in fields:
                    value = f.pre_save(obj, True)
                    if hasattr(value, "resolve_expression"):
                        raise ValueError(f"{meta.label}.{f.name}: an expression, not a value")
                    params.append(f.get_db_prep_save(value, connection))
            cursor.execute(prefix + ", ".join([row] * len(batch)) + returning, params)
            if not with_pk:
                keys = cursor.fetchall()
                # RETURNING gives the rows in the order of VALUES on both engines.
                for obj, (key,) in zip(batch, keys, strict=True):
                    obj.pk = meta.pk.to_python(key)
            for obj in batch:
                obj._state.adding, obj._state.db = False, DEFAULT_DB_ALIAS


def update(objs: Sequence[Model], fields: Sequence[str]) -> None:
    """UPDATE `fields` of the objects (all of one model, primary keys set) to their values,
    as `bulk_update(objs, fields)` would: one CASE per field, rows chosen by primary key."""
    if not objs:
        return
    meta: Any = type(objs[0])._meta
    connection = connections[DEFAULT_DB_ALIAS]
    chosen: list[Any] = [meta.get_field(name) for name in fields]
    if not chosen or any(f.primary_key or not f.concrete for f in chosen):
        raise ValueError(f"{meta.label}: update needs concrete fields but the primary key")
    quote = connection.ops.quote_name
    pk = meta.pk
    table, key = quote(meta.db_table), quote(pk.column)
    casts = connection.features.requires_casted_case_in_updates
    size = max(1, connection.ops.bulk_batch_size([pk, pk, *chosen], objs))
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        for start in range(0, len(objs), size):
            batch = objs[start : start + size]
            keys = [pk.get_db_prep_value(obj.pk, connection) for obj in batch]
            sets, params = [], []
            for f in chosen:
                whens = " ".join([f"WHEN {key} = %s THEN %s"] * len(batch))
                case = f"CASE {whens} ELSE NULL END"
                if casts:
                    case = f"CAST({case} AS {f.cast_db_type(connection)})"
                sets.append(f"{quote(f.column)} = {case}")
                for obj, k in zip(batch, keys, strict=True):
                    params += [k, f.get_db_prep_save(getattr(obj, f.attname), connection)]
            cursor.execute(
                f"UPDATE {table} SET {', '.join(sets)} "
                f"WHERE {key} IN ({', '.join(['%s'] * len(batch))})",
                params + keys,
            )

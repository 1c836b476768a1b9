"""Loading a Slowave export (`slowave import FILE --format export`, spec §9).

Rows keep their ids, so references stay valid and a re-export is byte-identical; ids already
in use are listed and nothing is written. With `remap`, colliding integer ids are renumbered
and references rewritten first (export_remap); string ids in use still refuse the import. The
whole file is read and checked first, then one transaction inserts everything and the FTS and
vector indexes are rebuilt.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, TypeVar, cast

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction

from memory import embeddings, passages
from memory.engines import storage_engine
from memory.errors import InvalidInput
from memory.indexing import Indexed, index_embedded, index_lexical, index_prototype, indexed_text
from memory.models import (
    Cursor,
    Episode,
    Event,
    Exposure,
    Memory,
    Procedure,
    Prototype,
    Session,
    Support,
)
from memory.replies.staff import ExportImportOut, RemapOut
from memory.schemas import JSON_MAX_DEPTH, JsonTooDeep, json_loads, json_problem, without_nul
from memory.secrets import SecretGuard
from memory.services.export import CHILDREN, DERIVED, FORMAT, RECORD_MODELS, VERSION
from memory.services.export_remap import remap_rows
from memory.text import normalized_hash

_M = TypeVar("_M", bound=models.Model)
Rows = dict[type[models.Model], list[models.Model]]

# Insert order; foreign keys are checked at commit, so only readability depends on it.
ORDER: list[type[models.Model]] = [
    RECORD_MODELS["continuity"],
    RECORD_MODELS["session"],
    Event,
    Episode,
    Prototype,
    Memory,
    Support,
    RECORD_MODELS["association"],
    Procedure,
    RECORD_MODELS["retrieval"],
    Exposure,
    Cursor,
    RECORD_MODELS["feedback"],
    RECORD_MODELS["learning"],
    RECORD_MODELS["forget_log"],
]
PREFIX = {"Memory": "sch_", "Event": "evt_", "Episode": "ep_", "Prototype": "pro_"}
Progress = Callable[[int], None]


def decode_row(model: type[models.Model], data: dict[str, Any]) -> models.Model:
    values: dict[str, Any] = {}
    for f in model._meta.concrete_fields:
        if f.name in DERIVED or f.attname not in data:
            continue
        value = data[f.attname]
        if value is not None and isinstance(f, models.DateTimeField):
            value = datetime.fromisoformat(value)
        elif value is not None and isinstance(f, models.BinaryField):
            value = base64.b64decode(value)
        elif value is not None and _integer(f):
            value = _stored(f).to_python(value)  # another type is refused here, not in SQL
        values[f.attname] = value
    return model(**values)


def _stored(f: Any) -> Any:
    """The field whose column holds the value: a foreign key's target field, or `f` itself."""
    return f.target_field if f.is_relation else f


def _integer(f: Any) -> bool:
    return bool(_stored(f).get_internal_type().endswith(("IntegerField", "AutoField")))


def _header(number: int, data: Any) -> None:
    if not (
        isinstance(data, dict) and data.get("record") == "header" and data.get("format") == FORMAT
    ):
        raise InvalidInput(
            f"line {number}: not a Slowave export (the first line must be its header)"
        )
    if data.get("version") != VERSION:
        raise InvalidInput(
            f"line {number}: export version {data.get('version')!r} is not supported"
        )


def _rows(number: int, data: dict[str, Any]) -> list[models.Model]:
    record = data.get("record")
    model = RECORD_MODELS.get(record) if isinstance(record, str) else None
    if model is None:
        raise InvalidInput(f"line {number}: unknown record {record!r}")
    try:
        rows = [decode_row(model, data)]
        if record in CHILDREN:
            key, child, _ = CHILDREN[record]
            rows += [decode_row(child, c) for c in data.get(key, [])]
        rows += (
            [decode_row(Cursor, c) for c in data.get("cursors", [])]
            if record == "retrieval"
            else []
        )
    except ValidationError as exc:
        raise InvalidInput(
            f"line {number}: malformed {record} record ({exc.messages[0]})"
        ) from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise InvalidInput(f"line {number}: malformed {record} record ({exc})") from None
    return rows


def export_parse(*, lines: Iterable[str]) -> dict[type[models.Model], list[models.Model]]:
    """Every row of the file, per model; the first bad line raises `line N: …`."""
    rows: dict[type[models.Model], list[models.Model]] = {m: [] for m in ORDER}
    seen_header = False
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = without_nul(json_loads(raw))
        except JsonTooDeep as exc:
            raise InvalidInput(f"line {number}: {exc.message}") from None
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {number}: not valid JSON ({exc.msg})") from None
        problem = json_problem(data, "", max_depth=JSON_MAX_DEPTH)  # NaN: no JSON column takes it
        if problem is not None:
            raise InvalidInput(f"line {number}: {problem[1]}")
        if not seen_header:
            _header(number, data)
            seen_header = True
            continue
        if not isinstance(data, dict):
            raise InvalidInput(f"line {number}: each line must be a JSON object")
        for row in _rows(number, data):
            rows[type(row)].append(row)
    if not seen_header:
        raise InvalidInput("line 1: the file is empty; expected a Slowave export header")
    return rows


def _of(rows: Rows, model: type[_M]) -> list[_M]:
    """`rows[model]`, typed: export_parse files every row under its own class."""
    return cast("list[_M]", rows[model])


def _collisions(rows: Rows) -> list[str]:
    taken: list[str] = []
    for model, items in rows.items():
        pks = [r.pk for r in items]
        # Any exported model: its default manager is `objects` (none declares another).
        for pk in model._default_manager.filter(pk__in=pks).values_list("pk", flat=True)[:20]:
            taken.append(f"{PREFIX.get(model.__name__, model.__name__.lower() + ' ')}{pk}")
    return taken


def _screen(rows: Rows) -> dict[str, dict[str, int]]:
    """Refuse or redact (SLOWAVE_SECRETS) the credentials in every row's text and JSON before
    anything is inserted. A redaction is recorded on its memory, or on the session its row
    belongs to when the export holds that session; the report lists them all."""
    guard = SecretGuard()
    sessions = {s.pk: s for s in _of(rows, Session)}
    for model, items in rows.items():
        fields = [
            f
            for f in model._meta.concrete_fields
            if isinstance(f, models.TextField | models.JSONField) and f.name != "redactions"
        ]
        # Short text (scopes, keys, client names, ids): refused, whatever the policy, never
        # rewritten, as a redaction could make two names one or outgrow the column.
        names = [f for f in model._meta.concrete_fields if isinstance(f, models.CharField)]
        for number, row in enumerate(items, start=1):
            label = f"{PREFIX.get(model.__name__, model.__name__.lower() + ' ')}{row.pk}"
            for name in names:
                short = getattr(row, name.attname)
                # A row is named by its id, unless the id is what holds the credential.
                where = f"{model.__name__.lower()} row {number}" if name.primary_key else label
                if isinstance(short, str):
                    guard.check_identifier(short, f"{where}.{name.name}")
            for f in fields:
                value = getattr(row, f.attname)
                setattr(row, f.attname, guard.clean_value(value, f"{label}.{f.name}"))
            found = guard.under(label)
            if not found:
                continue
            if isinstance(row, Memory | Session):
                row.redactions = {**row.redactions, **found}
                if isinstance(row, Memory):
                    row.normalized_hash = normalized_hash(row.content)
            elif getattr(row, "session_id", None) in sessions:
                owner = sessions[row.session_id]  # type: ignore[attr-defined]
                owner.redactions = {
                    **owner.redactions,
                    **{f"{label}.{p}": k for p, k in found.items()},
                }
    return guard.redacted


def _reindex(rows: Rows, now: datetime) -> None:
    """FTS and vectors are derived: rebuild them from the imported text."""
    kinds: list[tuple[str, type[Memory] | type[Episode] | type[Procedure]]] = [
        ("memory", Memory),
        ("episode", Episode),
        ("procedure", Procedure),
    ]
    for kind, model in kinds:
        items: list[Indexed] = list(_of(rows, model))
        for start in range(0, len(items), embeddings.BATCH_SIZE):
            batch = items[start : start + embeddings.BATCH_SIZE]
            for row in batch:
                index_lexical(row=row)
            embedded = passages.encoder_for(kind)([indexed_text(row) for row in batch])
            if embedded is None:
                continue  # lexical-only: the backfill pass embeds them later
            for row, item in zip(batch, embedded, strict=True):
                model.objects.filter(pk=row.pk).update(
                    **passages.columns(kind, item), embedded_at=now
                )
                index_embedded(row=row, embedded=item)
    for proto in _of(rows, Prototype):
        index_prototype(prototype=proto)


def export_import(
    *,
    lines: Iterable[str],
    now: datetime,
    progress: Progress | None = None,
    remap: bool = False,
) -> ExportImportOut:
    """Insert an export into this store, all or nothing.

    Rows keep their ids; with `remap`, integer ids already in use are renumbered (and every
    reference to them rewritten) instead of refusing the import.
    """
    rows = export_parse(lines=lines)
    redacted = _screen(rows)
    remapped: RemapOut | None = None
    try:
        with transaction.atomic():
            if remap:
                remapped = remap_rows(rows)
            taken = _collisions(rows)
            if taken:
                hint = (
                    "--remap renumbers only integer ids; these rows are already in this store"
                    if remap
                    else "import into an empty store, or pass --remap"
                )
                raise InvalidInput(
                    f"{len(taken)}+ ids of this export are already in use "
                    f"({', '.join(taken[:10])}); {hint}"
                )
            for model in ORDER:
                model._default_manager.bulk_create(rows[model], batch_size=500)
                if progress:
                    progress(len(rows[model]))
            storage_engine().reset_sequences(ORDER)
            _reindex(rows, now)
    except IntegrityError as exc:
        raise InvalidInput(f"the export conflicts with stored data: {exc}") from None
    report: ExportImportOut = {"imported": {m.__name__: len(rows[m]) for m in ORDER if rows[m]}}
    if remapped is not None:
        report.update(remapped)
    if redacted:
        report["redacted"] = redacted
    return report

"""`slowave import FILE --format export --remap`: renumber colliding integer ids (spec §9).

Rows of integer-keyed models (events, episodes, prototypes, memories, supports, associations,
exposures, learning applications, forget-log entries) whose id is already in use get fresh ids
above both the store's and the export's largest id; every reference to them inside the
imported rows is rewritten: foreign keys (`superseded_by`, `duplicate_of`, `source_event`, …),
the `sch_N`/`evt_N`/`ep_N`/`pro_N` strings of `target_id` and `replacement_memory_id`, episode
`event_ids`, and any such string anywhere in a JSON field (catalogs, provenance, metadata).

String ids (sessions, continuities, procedures, retrievals, cursors, feedback) are random in
practice, so two stores do not share them; one that is already in use means the same rows are
being imported again, and renumbering would only duplicate them. Those stay collisions.
Everything here works on the parsed rows in memory; the caller inserts them.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import models
from django.db.models import Max

from memory.models import (
    Association,
    Episode,
    Event,
    Exposure,
    ForgetLog,
    LearningApplication,
    Memory,
    Prototype,
    Support,
)
from memory.replies.staff import RemapOut

Rows = dict[type[models.Model], list[models.Model]]
IdMap = dict[type[models.Model], dict[int, int]]
IntModel = (
    type[Event]
    | type[Episode]
    | type[Prototype]
    | type[Memory]
    | type[Support]
    | type[Association]
    | type[Exposure]
    | type[LearningApplication]
    | type[ForgetLog]
)

INT_MODELS: list[IntModel] = [
    Event,
    Episode,
    Prototype,
    Memory,
    Support,
    Association,
    Exposure,
    LearningApplication,
    ForgetLog,
]
PUBLIC: dict[str, type[models.Model]] = {
    "sch": Memory,
    "evt": Event,
    "ep": Episode,
    "pro": Prototype,
}
PUBLIC_RE = re.compile(r"^(sch|evt|ep|pro)_([0-9]+)$")
# Character fields that hold a public id (`sch_12`) rather than a foreign key.
STRING_REFS = ("target_id", "replacement_memory_id")


def _plan(rows: Rows) -> IdMap:
    """Old id -> new id for every imported integer-keyed row whose id is taken."""
    plan: IdMap = {}
    for model in INT_MODELS:
        pks = [r.pk for r in rows.get(model, []) if r.pk is not None]
        if not pks:
            continue
        taken = sorted(set(model.objects.filter(pk__in=pks).values_list("pk", flat=True)))
        if not taken:
            continue
        top = max(model.objects.aggregate(top=Max("pk"))["top"] or 0, max(pks))
        plan[model] = {old: top + n for n, old in enumerate(taken, start=1)}
    return plan


def _public(value: str, plan: IdMap) -> str:
    match = PUBLIC_RE.match(value)
    if not match:
        return value
    mapping = plan.get(PUBLIC[match.group(1)], {})
    new = mapping.get(int(match.group(2)))
    return value if new is None else f"{match.group(1)}_{new}"


def _json(value: Any, plan: IdMap) -> Any:
    if isinstance(value, str):
        return _public(value, plan)
    if isinstance(value, list):
        return [_json(v, plan) for v in value]
    if isinstance(value, dict):
        return {
            _public(k, plan) if isinstance(k, str) else k: _json(v, plan) for k, v in value.items()
        }
    return value


def _rewrite(row: models.Model, plan: IdMap) -> None:
    for f in row._meta.concrete_fields:
        value = getattr(row, f.attname)
        new: object
        if value is None:
            continue
        if f.primary_key:
            new = plan.get(type(row), {}).get(value)
        elif f.is_relation and f.related_model in plan:
            new = plan[f.related_model].get(value)  # type: ignore[index]
        elif isinstance(f, models.JSONField):
            new = _json(value, plan)
        elif f.attname in STRING_REFS and isinstance(value, str):
            new = _public(value, plan)
        else:
            continue
        if new is not None:
            setattr(row, f.attname, new)
    if isinstance(row, Episode) and Event in plan:
        events = plan[Event]
        row.event_ids = [events.get(e, e) if isinstance(e, int) else e for e in row.event_ids]
    if isinstance(row, Association) and row.src_id > row.dst_id:
        row.src_id, row.dst_id = row.dst_id, row.src_id  # the table keeps src < dst


def remap_rows(rows: Rows) -> RemapOut:
    """Renumber colliding integer ids in place.

    Reports how many rows of each model moved and, for memories, `{old sch_N: new sch_N}`.
    """
    plan = _plan(rows)
    if plan:
        for items in rows.values():
            for row in items:
                _rewrite(row, plan)
    return {
        "remapped": {model.__name__: len(mapping) for model, mapping in plan.items()},
        "memory_ids": {f"sch_{old}": f"sch_{new}" for old, new in plan.get(Memory, {}).items()},
    }

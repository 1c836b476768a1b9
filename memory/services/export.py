"""Export of scopes as JSONL (spec §9): stable order, sorted keys, lossless fields.

Records: header, continuity, session (with its events), episode, prototype, memory (with its
Supports), association, procedure, retrieval (with exposures and cursors), feedback, learning,
forget_log. Vectors, `embedded_at` and `passages_complete` are derived data and left out: an
import re-embeds.

Rows of other scopes that an exported row points at (e.g. the session whose remember
corroborated a memory) travel as `stub` records carrying only what is referenced, so an
import into an empty store satisfies every foreign key. `export(import(export(S)))` equals
`export(S)` byte for byte except `exported_at`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import models
from django.db.models import Q

from memory.errors import InvalidInput
from memory.models import (
    Association,
    Continuity,
    Cursor,
    Episode,
    Event,
    Exposure,
    FeedbackEvent,
    ForgetLog,
    LearningApplication,
    Memory,
    Procedure,
    Prototype,
    Retrieval,
    Session,
    Support,
)
from memory.schemas import RuleViolation, check_scope

FORMAT, VERSION = "slowave-export", 1
DERIVED = {"embedding", "embedded_at", "passages", "passages_complete"}
# Nested rows: (parent record, key, model, foreign key to the parent).
CHILDREN: dict[str, tuple[str, type[Event] | type[Support] | type[Exposure], str]] = {
    "session": ("events", Event, "session_id"),
    "memory": ("supports", Support, "memory_id"),
    "retrieval": ("exposures", Exposure, "retrieval_id"),
}
RECORD_MODELS: dict[str, type[models.Model]] = {
    "continuity": Continuity,
    "session": Session,
    "episode": Episode,
    "prototype": Prototype,
    "memory": Memory,
    "association": Association,
    "procedure": Procedure,
    "retrieval": Retrieval,
    "feedback": FeedbackEvent,
    "learning": LearningApplication,
    "forget_log": ForgetLog,
}
# Foreign keys a stub (another scope's row) does not carry: it is evidence, not an export.
STUB_DROPS = {"session": ("continuity_id",), "episode": ("prototype_id",)}


def encode_row(obj: models.Model) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for f in obj._meta.concrete_fields:
        if f.name in DERIVED:
            continue
        value = getattr(obj, f.attname)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, (bytes, memoryview)):
            value = base64.b64encode(bytes(value)).decode()
        row[f.attname] = value
    return row


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Selection:
    """Primary keys to export per model, with the stub rows of other scopes kept apart."""

    scopes: list[str]
    ids: dict[str, set[Any]] = field(default_factory=dict)
    stub_sessions: set[str] = field(default_factory=set)
    stub_events: set[int] = field(default_factory=set)
    stub_episodes: set[int] = field(default_factory=set)


def _select(scopes: list[str]) -> Selection:
    sel = Selection(scopes)
    in_scope = Q(scope__in=scopes)
    sel.ids["session"] = set(Session.objects.filter(in_scope).values_list("pk", flat=True))
    sel.ids["memory"] = set(Memory.objects.filter(in_scope).values_list("pk", flat=True))
    sel.ids["episode"] = set(Episode.objects.filter(in_scope).values_list("pk", flat=True))
    sel.ids["prototype"] = set(Prototype.objects.filter(in_scope).values_list("pk", flat=True))
    sel.ids["procedure"] = set(Procedure.objects.filter(in_scope).values_list("pk", flat=True))
    sel.ids["retrieval"] = set(Retrieval.objects.filter(in_scope).values_list("pk", flat=True))
    sel.ids["continuity"] = set(
        Session.objects.filter(in_scope, continuity__isnull=False).values_list(
            "continuity_id", flat=True
        )
    )
    supports = Support.objects.filter(memory_id__in=sel.ids["memory"])
    for event_id, episode_id, session_id in supports.values_list(
        "event_id", "episode_id", "session_id"
    ):
        sel.stub_events.add(event_id)
        sel.stub_episodes.add(episode_id)
        sel.stub_sessions.add(session_id)
    for found in (sel.stub_events, sel.stub_episodes, sel.stub_sessions):
        found.discard(None)
    sel.stub_episodes -= sel.ids["episode"]
    for first_event, session_id in Episode.objects.filter(pk__in=sel.stub_episodes).values_list(
        "first_event_id", "session_id"
    ):
        sel.stub_events.add(first_event)
        sel.stub_sessions.add(session_id)
    sel.stub_events -= set(
        Event.objects.filter(session_id__in=sel.ids["session"]).values_list("pk", flat=True)
    )
    sel.stub_sessions |= set(
        Event.objects.filter(pk__in=sel.stub_events).values_list("session_id", flat=True)
    )
    sel.stub_sessions -= sel.ids["session"]
    return sel


def _session_records(sel: Selection) -> Iterator[dict[str, Any]]:
    all_ids = sel.ids["session"] | sel.stub_sessions
    for session in Session.objects.filter(pk__in=all_ids).order_by("pk"):
        stub = session.pk in sel.stub_sessions
        events = session.events.filter(pk__in=sel.stub_events) if stub else session.events.all()
        row = {
            "record": "session",
            **encode_row(session),
            "events": [encode_row(e) for e in events.order_by("pk")],
        }
        if stub:
            row.update({"stub": True, **{k: None for k in STUB_DROPS["session"]}})
        yield row


def _plain(record: str, queryset: Any) -> Iterator[dict[str, Any]]:
    child = CHILDREN.get(record)
    for obj in queryset:
        row = {"record": record, **encode_row(obj)}
        if child is not None:
            key, model, fk = child
            row[key] = [encode_row(c) for c in model.objects.filter(**{fk: obj.pk}).order_by("pk")]
        if record == "retrieval":
            row["cursors"] = [
                encode_row(c) for c in Cursor.objects.filter(retrieval=obj).order_by("pk")
            ]
        yield row


def _records(sel: Selection) -> Iterator[dict[str, Any]]:
    yield from _plain(
        "continuity", Continuity.objects.filter(pk__in=sel.ids["continuity"]).order_by("pk")
    )
    yield from _session_records(sel)
    for episode in Episode.objects.filter(pk__in=sel.ids["episode"] | sel.stub_episodes).order_by(
        "pk"
    ):
        row = {"record": "episode", **encode_row(episode)}
        if episode.pk in sel.stub_episodes:
            row.update({"stub": True, **{k: None for k in STUB_DROPS["episode"]}})
        yield row
    yield from _plain(
        "prototype", Prototype.objects.filter(pk__in=sel.ids["prototype"]).order_by("pk")
    )
    yield from _plain("memory", Memory.objects.filter(pk__in=sel.ids["memory"]).order_by("pk"))
    yield from _plain(
        "association",
        Association.objects.filter(
            src_id__in=sel.ids["memory"], dst_id__in=sel.ids["memory"]
        ).order_by("pk"),
    )
    yield from _plain(
        "procedure", Procedure.objects.filter(pk__in=sel.ids["procedure"]).order_by("pk")
    )
    retrievals = sel.ids["retrieval"]
    yield from _plain("retrieval", Retrieval.objects.filter(pk__in=retrievals).order_by("pk"))
    yield from _plain(
        "feedback",
        FeedbackEvent.objects.filter(retrieval_id__in=retrievals).order_by("created_at", "pk"),
    )
    yield from _plain(
        "learning", LearningApplication.objects.filter(retrieval_id__in=retrievals).order_by("pk")
    )
    yield from _plain(
        "forget_log",
        ForgetLog.objects.filter(
            Q(memory_id__in=sel.ids["memory"]) | Q(procedure_id__in=sel.ids["procedure"])
        ).order_by("pk"),
    )


def export_scopes(*, scopes: list[str] | None, everything: bool = False) -> list[str]:
    """The scopes an export covers: the given ones (checked) or, with `everything`, all."""
    if everything:
        found = set(Session.objects.values_list("scope", flat=True)) | set(
            Memory.objects.values_list("scope", flat=True)
        )
        return sorted(found)
    if not scopes:
        raise InvalidInput.for_field("scope", "name at least one --scope, or use --all")
    spelt: set[str] = set()
    for scope in scopes:
        try:
            spelt.add(check_scope(scope))
        except RuleViolation as exc:
            raise InvalidInput.for_field_message("scope", exc.message) from None
    return sorted(spelt)


def scopes_export(*, scopes: list[str], now: datetime) -> Iterator[str]:
    """JSONL lines (no newline) of the export, header first."""
    yield dumps(
        {
            "record": "header",
            "format": FORMAT,
            "version": VERSION,
            "scopes": scopes,
            "exported_at": now.isoformat(),
        }
    )
    for record in _records(_select(scopes)):
        yield dumps(record)

"""Storing the items of one slowave_remember call (memory.services.remember runs the verb).

Lives here: what a call's items share (`Batch`: the session, the next event number, the
scope's active and forgotten texts, read once), and the two ways to store them. `store_all`
writes every item at once, a fixed handful of statements for the call: events, memories and
supports each in one insert, their index rows in one batch per index. `store_one` writes one
item in its own savepoint; the call falls back to it item by item when the batch fails, so a
text a parallel call committed meanwhile (PostgreSQL's active-hash index) becomes a match and
one item's runtime failure does not sink the others.
Does not live here: screening, embedding, corroboration, the reply (memory.services.remember).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

from django.db import IntegrityError, transaction

from memory import embeddings, passages
from memory.engines import bulk
from memory.ids import memory_ref
from memory.indexing import index_memories
from memory.models import Event, Memory, Support
from memory.replies.verbs import MemoryTypeOut, StoredOut
from memory.schemas import RememberItem, parse_timestamp
from memory.services.sessions import NewEvent, event_next_seq, events_append
from memory.text import normalized_hash

INITIAL_SALIENCE = 1.4
# The unique index on a scope's active hashes (memory.models.Memory.Meta).
ACTIVE_HASH_CONSTRAINT = "memory_unique_active_hash"


@dataclass
class Batch:
    """What one call's items share: read once per call, not once per item."""

    session: Any
    next_seq: int
    active: dict[str, int]  # normalized hash → pk of an active memory in the scope
    forgotten: set[str]  # hashes of forgotten memories in the scope
    created: list[tuple[Memory, Any, Event]] = field(default_factory=list)

    @classmethod
    def read(cls, session, items: list[RememberItem]) -> Batch:
        digests = {normalized_hash(item.content) for item in items}
        active: dict[str, int] = {}
        forgotten: set[str] = set()
        for digest, pk, status in (
            Memory.objects.filter(
                scope=session.scope,
                normalized_hash__in=digests,
                status__in=[Memory.Status.ACTIVE, Memory.Status.FORGOTTEN],
            )
            .order_by("pk")
            .values_list("normalized_hash", "pk", "status")
        ):
            if status == Memory.Status.ACTIVE:
                active.setdefault(digest, pk)
            else:
                forgotten.add(digest)
        return cls(session, event_next_seq(session), active, forgotten)


def _event(item: RememberItem) -> NewEvent:
    occurred_at = parse_timestamp(item.occurred_at, "occurred_at") if item.occurred_at else None
    return NewEvent(
        Event.Kind.REMEMBER, item.content, occurred_at=occurred_at, metadata={"type": item.type}
    )


def store_all(
    *,
    batch: Batch,
    items: list[RememberItem],
    vectors: list[passages.Embedded] | None,
    now: datetime,
    redacted: list[dict[str, int]],
) -> list[StoredOut]:
    """Every item at once, in the caller's transaction; `batch` changes only once all are
    stored. An item whose text an earlier item of the call brings matches that one's memory."""
    session = batch.session
    events = events_append(
        session=session, events=[_event(item) for item in items], now=now, seq=batch.next_seq
    )
    digests = [normalized_hash(item.content) for item in items]
    embedded = [vectors[i] if vectors is not None else None for i in range(len(items))]
    makers: dict[str, int] = {}  # digest → the item of this call whose memory it is
    for index, digest in enumerate(digests):
        if digest not in batch.active:
            makers.setdefault(digest, index)
    made = dict(
        zip(
            makers.values(),
            bulk.insert(
                [
                    _memory(batch, items[i], embedded[i], events[i], digests[i], now, redacted[i])
                    for i in makers.values()
                ]
            ),
            strict=True,
        )
    )
    matched = Memory.objects.in_bulk([batch.active[d] for d in set(digests) if d in batch.active])
    supports, stored = [], []
    for index, digest in enumerate(digests):
        memory = made.get(index)
        kind = Support.Kind.SOURCE_EVENT
        if memory is None:
            memory = (
                matched[batch.active[digest]] if digest in batch.active else made[makers[digest]]
            )
            kind = Support.Kind.REPEAT
        supports.append(_support(batch, memory.pk, kind, events[index], now))
        stored.append(_reply(memory, events[index], kind == Support.Kind.REPEAT, redacted[index]))
    bulk.insert(supports)
    index_memories(rows=[(memory, embedded[i]) for i, memory in made.items()])
    for index, memory in made.items():
        batch.active[digests[index]] = memory.pk
        vector = embedded[index]
        if vector is not None:
            batch.created.append((memory, vector.vector, events[index]))
    batch.next_seq += len(items)
    return stored


def store_one(
    *,
    batch: Batch,
    item: RememberItem,
    embedded: passages.Embedded | None,
    now: datetime,
    redacted: dict[str, int],
) -> StoredOut:
    """One item in a savepoint. When a parallel call in the scope committed the same text after
    this call read the scope (PostgreSQL: the active-hash unique index refuses the insert once
    that call commits), the item is stored again as a match of the memory that call made."""
    try:
        with transaction.atomic():
            return _store(batch=batch, item=item, embedded=embedded, now=now, redacted=redacted)
    except IntegrityError as exc:
        if ACTIVE_HASH_CONSTRAINT not in str(exc):
            raise
    digest = normalized_hash(item.content)
    winner = (
        Memory.objects.filter(
            scope=batch.session.scope, normalized_hash=digest, status=Memory.Status.ACTIVE
        )
        .order_by("pk")
        .values_list("pk", flat=True)
        .first()
    )
    if winner is None:  # forgotten again in between: nothing to match, so try once more
        batch.active.pop(digest, None)
    else:
        batch.active[digest] = winner
    with transaction.atomic():
        return _store(batch=batch, item=item, embedded=embedded, now=now, redacted=redacted)


def _store(
    *,
    batch: Batch,
    item: RememberItem,
    embedded: passages.Embedded | None,
    now: datetime,
    redacted: dict[str, int],
) -> StoredOut:
    """One item, inside its own savepoint; `batch` changes only once the item is stored."""
    (event,) = events_append(
        session=batch.session, events=[_event(item)], now=now, seq=batch.next_seq
    )
    digest = normalized_hash(item.content)
    match_pk = batch.active.get(digest)
    if match_pk is not None:
        _support(batch, match_pk, Support.Kind.REPEAT, event, now).save(force_insert=True)
        memory = Memory.objects.get(pk=match_pk)
    else:
        memory = _memory(batch, item, embedded, event, digest, now, redacted)
        memory.save(force_insert=True)
        _support(batch, memory.pk, Support.Kind.SOURCE_EVENT, event, now).save(force_insert=True)
        index_memories(rows=[(memory, embedded)])
        batch.active[digest] = memory.pk
        if embedded is not None:
            batch.created.append((memory, embedded.vector, event))
    batch.next_seq += 1
    return _reply(memory, event, match_pk is not None, redacted)


def _memory(
    batch: Batch,
    item: RememberItem,
    embedded: passages.Embedded | None,
    event: Event,
    digest: str,
    now: datetime,
    redacted: dict[str, int],
) -> Memory:
    session = batch.session
    return Memory(
        type=item.type,
        content=item.content,
        normalized_hash=digest,
        scope=session.scope,
        scope_kind=session.scope_kind,
        salience=INITIAL_SALIENCE,
        source_session=session,
        source_event=event,
        occurred_at=event.occurred_at,
        created_at=now,
        embedding=embeddings.to_blob(embedded.vector) if embedded is not None else None,
        passages=passages.to_blob(embedded.passages) if embedded is not None else None,
        passages_complete=embedded is None or embedded.complete,
        embedded_at=now if embedded is not None else None,
        flags={"reremembered_forgotten": True} if digest in batch.forgotten else {},
        provenance={
            "integration": session.client_name,
            "integration_version": session.client_version,
        },
        redactions={"content": redacted} if redacted else {},
    )


def _support(batch: Batch, memory_pk: int, kind: str, event: Event, now: datetime) -> Support:
    session = batch.session
    return Support(
        memory_id=memory_pk,
        kind=kind,
        event=event,
        session=session,
        scope=session.scope,
        created_at=now,
    )


def _reply(memory: Memory, event: Event, matched: bool, redacted: dict[str, int]) -> StoredOut:
    disposition: Literal["created", "matched"] = "matched" if matched else "created"
    reply: StoredOut = {
        "stored": True,
        "memory_id": memory_ref(memory.pk),
        "disposition": disposition,
        "type": cast(MemoryTypeOut, memory.type),  # as RememberIn validated it
        "scope": memory.scope,
        "source_event_id": f"evt_{event.pk}",
    }
    if redacted:
        reply["redacted"] = redacted
    return reply

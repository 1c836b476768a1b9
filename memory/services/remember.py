"""slowave_remember: store durable typed claims, one transaction per call (spec §6.3)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

import numpy as np
from django.db import IntegrityError, transaction

from memory import embeddings, passages
from memory.errors import STORAGE_FAULTS, SlowaveError, as_slowave_error
from memory.ids import memory_ref
from memory.indexing import index_memory
from memory.models import Event, Memory, Support
from memory.replies.verbs import (
    FailedItemOut,
    MemoryTypeOut,
    RememberOut,
    StoredItemOut,
    StoredOut,
)
from memory.schemas import RememberIn, RememberItem, parse_timestamp
from memory.secrets import SecretGuard
from memory.services.reaping import session_reap_if_idle
from memory.services.sessions import event_append, event_next_seq, session_check, session_touch
from memory.text import normalized_hash
from memory.vectors import get_index

logger = logging.getLogger(__name__)
INITIAL_SALIENCE = 1.4
CORROBORATION_COSINE = 0.90
CORROBORATION_K = 5
# Near-identical text ranks first across all scopes, so a short scan finds the other-scope twins.
CORROBORATION_SCAN = 32
# The unique index on a scope's active hashes (memory.models.Memory.Meta).
ACTIVE_HASH_CONSTRAINT = "memory_unique_active_hash"


@dataclass
class _Batch:
    """What one call's items share: read once per call, not once per item."""

    session: Any
    next_seq: int
    active: dict[str, int]  # normalized hash → pk of an active memory in the scope
    forgotten: set[str]  # hashes of forgotten memories in the scope
    created: list[tuple[Memory, Any, Event]] = field(default_factory=list)

    @classmethod
    def read(cls, session, items: list[RememberItem]) -> _Batch:
        digests = {normalized_hash(item.content) for item in items}
        in_scope = Memory.objects.filter(scope=session.scope, normalized_hash__in=digests)
        active: dict[str, int] = {}
        for digest, pk in (
            in_scope.filter(status=Memory.Status.ACTIVE)
            .order_by("pk")
            .values_list("normalized_hash", "pk")
        ):
            active.setdefault(digest, pk)
        forgotten = set(
            in_scope.filter(status=Memory.Status.FORGOTTEN).values_list(
                "normalized_hash", flat=True
            )
        )
        return cls(session, event_next_seq(session), active, forgotten)


def _screened(data: RememberIn) -> tuple[list[RememberItem], list[dict[str, int]]]:
    """The items with credentials refused or redacted (SLOWAVE_SECRETS), and per item the kinds
    redacted from its content."""
    guard = SecretGuard()
    items, redacted = [], []
    for index, item in enumerate(data.items()):
        path = "content" if data.memories is None else f"memories[{index}].content"
        items.append(item.model_copy(update={"content": guard.clean(item.content, path)}))
        redacted.append(guard.redacted.get(path, {}))
    return items, redacted


def memory_remember(*, data: RememberIn, now: datetime) -> RememberOut:
    items, redacted = _screened(data)
    session_reap_if_idle(session_id=data.session_id, now=now)
    # The leading passages only, so the call's latency does not grow with content; the
    # embeddings backfill pass embeds the rest (memory.passages).
    vectors = passages.encode(
        [item.content for item in items],
        limit=passages.REMEMBER_PASSAGES,
        total=passages.REMEMBER_CALL_PASSAGES,
    )
    with transaction.atomic():
        session = session_check(session_id=data.session_id, scope=data.scope)
        results: list[StoredItemOut | FailedItemOut] = []
        batch = _Batch.read(session, items)
        for index, item in enumerate(items):
            embedded = vectors[index] if vectors is not None else None
            try:
                results.append(
                    {
                        "index": index,
                        "ok": True,
                        "data": _stored(
                            batch=batch,
                            item=item,
                            embedded=embedded,
                            now=now,
                            redacted=redacted[index],
                        ),
                    }
                )
            except SlowaveError:
                raise
            except Exception as exc:  # one item's runtime failure must not sink the batch
                error = as_slowave_error(exc)
                if isinstance(error, STORAGE_FAULTS):
                    raise error from exc  # the store's fault, not this item's: name it
                if error.code == "internal_error":
                    # Its message sends the operator here: the traceback must be in the log.
                    logger.error(
                        "remember: item %d of session %s failed", index, session.id, exc_info=exc
                    )
                results.append(
                    {
                        "index": index,
                        "ok": False,
                        "error": {
                            "code": "storage_error",
                            "message": f"could not store item {index}: {error.message}",
                            "retryable": False,
                        },
                    }
                )
        _corroborate(batch.created, session=session, now=now)
        session_touch(session=session, now=now)
    if data.memories is None:
        only = results[0]
        if not only["ok"]:
            raise SlowaveError(only["error"]["message"])
        return only["data"]
    return {"results": results}


def _stored(
    *,
    batch: _Batch,
    item: RememberItem,
    embedded: passages.Embedded | None,
    now: datetime,
    redacted: dict[str, int],
) -> StoredOut:
    """_store in a savepoint. When a parallel call in the scope committed the same text after
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
    batch: _Batch,
    item: RememberItem,
    embedded: passages.Embedded | None,
    now: datetime,
    redacted: dict[str, int],
) -> StoredOut:
    """One item, inside its own savepoint; `batch` changes only once the item is stored."""
    session = batch.session
    occurred_at = parse_timestamp(item.occurred_at, "occurred_at") if item.occurred_at else None
    event = event_append(
        session=session,
        kind=Event.Kind.REMEMBER,
        content=item.content,
        now=now,
        occurred_at=occurred_at,
        metadata={"type": item.type},
        seq=batch.next_seq,
    )
    digest = normalized_hash(item.content)
    match_pk = batch.active.get(digest)
    disposition: Literal["created", "matched"]
    if match_pk is not None:
        Support.objects.create(
            memory_id=match_pk,
            kind=Support.Kind.REPEAT,
            event=event,
            session=session,
            scope=session.scope,
            created_at=now,
        )
        memory = Memory.objects.get(pk=match_pk)
        disposition = "matched"
    else:
        memory = _create(
            session=session,
            item=item,
            embedded=embedded,
            event=event,
            digest=digest,
            occurred_at=occurred_at,
            now=now,
            forgotten_before=digest in batch.forgotten,
            redacted=redacted,
        )
        batch.active[digest] = memory.pk
        if embedded is not None:
            batch.created.append((memory, embedded.vector, event))
        disposition = "created"
    batch.next_seq += 1
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


def _create(
    *,
    session,
    item: RememberItem,
    embedded: passages.Embedded | None,
    event: Event,
    digest: str,
    occurred_at,
    now,
    forgotten_before: bool,
    redacted: dict[str, int],
) -> Memory:
    flags = {"reremembered_forgotten": True} if forgotten_before else {}
    memory = Memory.objects.create(
        type=item.type,
        content=item.content,
        normalized_hash=digest,
        scope=session.scope,
        scope_kind=session.scope_kind,
        salience=INITIAL_SALIENCE,
        source_session=session,
        source_event=event,
        occurred_at=occurred_at,
        created_at=now,
        embedding=embeddings.to_blob(embedded.vector) if embedded is not None else None,
        passages=passages.to_blob(embedded.passages) if embedded is not None else None,
        passages_complete=embedded is None or embedded.complete,
        embedded_at=now if embedded is not None else None,
        flags=flags,
        provenance={
            "integration": session.client_name,
            "integration_version": session.client_version,
        },
        redactions={"content": redacted} if redacted else {},
    )
    Support.objects.create(
        memory=memory,
        kind=Support.Kind.SOURCE_EVENT,
        event=event,
        session=session,
        scope=session.scope,
        created_at=now,
    )
    index_memory(memory=memory, embedded=embedded)
    return memory


def _corroborate(created: list[tuple[Memory, Any, Event]], *, session, now: datetime) -> None:
    """Near-identical active memories in other scopes gain a corroboration Support (feeds §7.4).

    One search for the whole batch: every item of a call shares the session's scope, so items
    of the same batch never corroborate each other."""
    if not created:
        return
    found = get_index().knn_all_scopes_many(
        "memory", np.stack([vector for _, vector, _ in created]), CORROBORATION_SCAN
    )
    for (memory, _, event), hits in zip(created, found, strict=True):
        others = [
            (pk, cos)
            for pk, cos, scope in hits
            if scope != memory.scope and cos >= CORROBORATION_COSINE
        ]
        for pk, cosine in others[:CORROBORATION_K]:
            if Memory.objects.filter(pk=pk, status=Memory.Status.ACTIVE).exists():
                Support.objects.create(
                    memory_id=pk,
                    kind=Support.Kind.CORROBORATION,
                    event=event,
                    session=session,
                    scope=memory.scope,
                    weight=cosine,
                    created_at=now,
                )

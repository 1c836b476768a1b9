"""slowave_remember: store durable typed claims, one transaction per call (spec §6.3)."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import numpy as np
from django.db import IntegrityError, transaction

from memory import passages
from memory.engines import bulk
from memory.errors import STORAGE_FAULTS, SlowaveError, as_slowave_error
from memory.models import Event, Memory, Support
from memory.replies.verbs import FailedItemOut, RememberOut, StoredItemOut
from memory.schemas import RememberIn, RememberItem
from memory.secrets import SecretGuard
from memory.services.reaping import session_reap_if_idle
from memory.services.remember_store import (
    ACTIVE_HASH_CONSTRAINT,
    Batch,
    store_all,
    store_one,
)
from memory.services.sessions import session_check, session_touch
from memory.vectors import get_index

logger = logging.getLogger(__name__)
CORROBORATION_COSINE = 0.90
CORROBORATION_K = 5
# Near-identical text ranks first across all scopes, so a short scan finds the other-scope twins.
CORROBORATION_SCAN = 32


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
        batch = Batch.read(session, items)
        results = _stored_all(batch, items, vectors, now, redacted)
        _corroborate(batch.created, session=session, now=now)
        session_touch(session=session, now=now)
    if data.memories is None:
        only = results[0]
        if not only["ok"]:
            raise SlowaveError(only["error"]["message"])
        return only["data"]
    return {"results": results}


def _stored_all(
    batch: Batch,
    items: list[RememberItem],
    vectors: list[passages.Embedded] | None,
    now: datetime,
    redacted: list[dict[str, int]],
) -> list[StoredItemOut | FailedItemOut]:
    """All items in one batch; when that fails, item by item (remember_store says why)."""
    try:
        with transaction.atomic():
            stored = store_all(
                batch=batch, items=items, vectors=vectors, now=now, redacted=redacted
            )
        return [{"index": i, "ok": True, "data": data} for i, data in enumerate(stored)]
    except SlowaveError:
        raise
    except Exception as exc:
        if isinstance(as_slowave_error(exc), STORAGE_FAULTS):
            raise
        if not (isinstance(exc, IntegrityError) and ACTIVE_HASH_CONSTRAINT in str(exc)):
            logger.warning("remember: the batch failed (%s); storing item by item", exc)
    return [
        _stored_one(batch, index, item, vectors, now, redacted[index])
        for index, item in enumerate(items)
    ]


def _stored_one(
    batch: Batch,
    index: int,
    item: RememberItem,
    vectors: list[passages.Embedded] | None,
    now: datetime,
    redacted: dict[str, int],
) -> StoredItemOut | FailedItemOut:
    embedded = vectors[index] if vectors is not None else None
    try:
        data = store_one(batch=batch, item=item, embedded=embedded, now=now, redacted=redacted)
        return {"index": index, "ok": True, "data": data}
    except SlowaveError:
        raise
    except Exception as exc:  # one item's runtime failure must not sink the batch
        error = as_slowave_error(exc)
        if isinstance(error, STORAGE_FAULTS):
            raise error from exc  # the store's fault, not this item's: name it
        if error.code == "internal_error":
            # Its message sends the operator here: the traceback must be in the log.
            logger.error(
                "remember: item %d of session %s failed", index, batch.session.id, exc_info=exc
            )
        return {
            "index": index,
            "ok": False,
            "error": {
                "code": "storage_error",
                "message": f"could not store item {index}: {error.message}",
                "retryable": False,
            },
        }


def _corroborate(created: list[tuple[Memory, Any, Event]], *, session, now: datetime) -> None:
    """Near-identical active memories in other scopes gain a corroboration Support (feeds §7.4).

    One search for the whole batch: every item of a call shares the session's scope, so items
    of the same batch never corroborate each other."""
    if not created:
        return
    found = get_index().knn_all_scopes_many(
        "memory", np.stack([vector for _, vector, _ in created]), CORROBORATION_SCAN
    )
    chosen = [
        [
            (pk, cos)
            for pk, cos, scope in hits
            if scope != memory.scope and cos >= CORROBORATION_COSINE
        ][:CORROBORATION_K]
        for (memory, _, _), hits in zip(created, found, strict=True)
    ]
    wanted = {pk for pairs in chosen for pk, _ in pairs}
    active = (
        set(
            Memory.objects.filter(pk__in=wanted, status=Memory.Status.ACTIVE).values_list(
                "pk", flat=True
            )
        )
        if wanted
        else set()
    )
    bulk.insert(
        [
            Support(
                memory_id=pk,
                kind=Support.Kind.CORROBORATION,
                event=event,
                session=session,
                scope=memory.scope,
                weight=cosine,
                created_at=now,
            )
            for (memory, _, event), pairs in zip(created, chosen, strict=True)
            for pk, cosine in pairs
            if pk in active
        ]
    )

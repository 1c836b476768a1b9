"""slowave_recall: mid-task lookup and cursor continuation (spec §6.4)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, cast

from django.db import transaction

from memory.errors import InvalidInput
from memory.models import Cursor, Event, Session
from memory.replies.verbs import RecallOut
from memory.retrieval.facets import build_cue, flatten_context
from memory.schemas import CONTEXT_MAX_BYTES, RecallIn
from memory.secrets import SecretGuard, redactions_merged
from memory.services.activate import LEXICAL_ONLY
from memory.services.reaping import session_for_call, session_reap_if_idle
from memory.services.retrieval import retrieval_page, retrieval_prepare, retrieval_publish
from memory.services.sessions import event_append, session_claim, session_touch


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _merged_context(base: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """The session's context with a recall's merged in, held to the limit of one task_context:
    it is part of every later cue of the session, so it must not grow call by call."""
    merged = _merge(base, extra or {})
    if extra and len(json.dumps(merged, ensure_ascii=False).encode("utf-8")) > CONTEXT_MAX_BYTES:
        raise InvalidInput.for_field_message(
            "task_context",
            "task_context merged into the session's context must serialise to at most "
            f"{CONTEXT_MAX_BYTES // 1024} KiB; send fewer or shorter keys, or start a new "
            "session with slowave_activate",
        )
    return merged


def retrieval_recall(*, data: RecallIn, now: datetime) -> RecallOut:
    if data.continue_from is not None:
        session_reap_if_idle(session_id=data.session_id, now=now)
        return _continue(data=data, now=now)
    guard = SecretGuard()
    data = guard.clean_value(data, "")  # the query and context are stored with the retrieval
    # Rank before the write transaction: the query embedding and ranking hold no lock.
    session = session_for_call(session_id=data.session_id, scope=data.scope, now=now)
    context = _merged_context(session.task_context, data.task_context)
    cue = build_cue(data.query, data.semantic_context, flatten_context(context))
    prepared = retrieval_prepare(
        scope=session.scope,
        kind="recall",
        cue=cue,
        evidence_mode=data.evidence,
        now=now,
        max_tokens=data.max_tokens,
    )
    with transaction.atomic():
        session_claim(session_id=data.session_id, scope=data.scope, now=now)
        if guard.redacted:
            held = Session.objects.get(pk=session.pk).redactions
            Session.objects.filter(pk=session.pk).update(
                redactions=redactions_merged(held, guard.redacted, "recall")
            )
        if data.task_context:
            session = Session.objects.get(pk=session.pk)
            session.task_context = _merged_context(session.task_context, data.task_context)
            Session.objects.filter(pk=session.pk).update(task_context=session.task_context)
        event_append(
            session=session, kind=Event.Kind.RECALL_QUERY, content=data.query or "", now=now
        )
        retrieval, page = retrieval_publish(
            session=session, prepared=prepared, query=data.query or "", now=now
        )
        lexical_only = page.pop("lexical_only")
        reply = {
            **page,
            "evidence": retrieval.catalog.get("evidence", []),
            "evidence_mode": retrieval.evidence_mode,
            "evidence_truncated": retrieval.catalog.get("evidence_truncated", False),
            "retrieval_policy_version": retrieval.policy_version,
            "relevant_total": retrieval.relevant_total,
            "catalog_truncated": retrieval.catalog_truncated,
        }
        if lexical_only:
            reply["warnings"] = [{"code": "lexical_only", "message": LEXICAL_ONLY}]
        if guard.redacted:
            reply["redacted"] = guard.redacted
        return cast(RecallOut, reply)  # the page is catalog data, untyped


def _continue(*, data: RecallIn, now: datetime) -> RecallOut:
    with transaction.atomic():
        cursor = (
            Cursor.objects.select_related("retrieval__session")
            .filter(pk=data.continue_from)
            .first()
        )
        if cursor is None:
            raise InvalidInput.for_field_message("continue_from", "unknown continue_from cursor")
        retrieval = cursor.retrieval
        if retrieval.session_id != data.session_id or retrieval.scope != data.scope:
            raise InvalidInput.for_field_message(
                "continue_from", "continue_from cursor does not match session_id and scope"
            )
        session = Session.objects.filter(pk=retrieval.session_id).first()
        if session is None:
            raise InvalidInput.for_field_message(
                "continue_from", "continue_from cursor session no longer exists"
            )
        if session.status == Session.Status.ENDED:
            raise InvalidInput.for_field_message(
                "continue_from", "continue_from cursor session is already ended"
            )
        page = retrieval_page(retrieval=retrieval, index=cursor.page, now=now)
        session_touch(session=session, now=now)
        return cast(RecallOut, page)  # a page alone: the keys of RecallOut every page has

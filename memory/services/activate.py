"""slowave_activate: open a task session and prime working memory (spec §6.2)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, cast

from django.db import transaction

from memory.engines import bulk
from memory.ids import new_session_id
from memory.models import Event, Memory, Session
from memory.replies.verbs import ActivateOut, WarningOut
from memory.retrieval.facets import build_cue, flatten_context
from memory.schemas import ActivateIn
from memory.secrets import SecretGuard, redactions_merged
from memory.services.retrieval import retrieval_prepare, retrieval_publish
from memory.services.sessions import ClientInfo, continuity_resolve, event_append

COLD_START = (
    "This scope has no memories or imported history yet. Read one stable project document "
    "(e.g. the README), then remember only durable facts that are not otherwise observable, "
    "one claim per memory."
)
LEXICAL_ONLY = "The embedding model is unavailable; results come from lexical search only."


def _fold(scope: str) -> str:
    return re.sub(r"[-_]+", "-", scope.lower())


def _warnings(scope: str, cold: bool, lexical_only: bool) -> list[WarningOut]:
    warnings: list[WarningOut] = []
    if cold:
        warnings.append({"code": "cold_start", "message": COLD_START})
        similar = sorted(
            s
            for s in Memory.objects.exclude(scope=scope).values_list("scope", flat=True).distinct()
            if _fold(s) == _fold(scope)
        )
        if similar:
            warnings.append(
                {
                    "code": "scope_fragmentation",
                    "message": f"scope {scope} looks like existing scope {similar[0]}; "
                    "use one spelling so memories are shared",
                }
            )
    if lexical_only:
        warnings.append({"code": "lexical_only", "message": LEXICAL_ONLY})
    return warnings


def session_activate(*, data: ActivateIn, client: ClientInfo, now: datetime) -> ActivateOut:
    guard = SecretGuard()
    data = guard.clean_value(data, "")  # the task is stored and shown: no credential in it
    # Rank before the write transaction: the embedding and ranking hold no lock.
    cue = build_cue(
        data.task, data.initial_goal, data.semantic_context, flatten_context(data.task_context)
    )
    prepared = retrieval_prepare(
        scope=data.scope,
        kind="activate",
        cue=cue,
        evidence_mode="references",
        now=now,
        max_tokens=data.max_tokens,
    )
    with transaction.atomic():
        continuity, continuity_state = continuity_resolve(data=data, client=client, now=now)
        session = bulk.create(
            Session,
            id=new_session_id(),
            scope=data.scope,
            scope_kind=data.scope.partition(":")[0],
            continuity=continuity,
            task=data.task,
            initial_goal=data.initial_goal,
            task_context=data.task_context or {},
            semantic_context=data.semantic_context or "",
            client_name=client.name,
            client_version=client.version,
            client_identity=client.identity,
            started_at=now,
            last_activity_at=now,
            redactions=redactions_merged({}, guard.redacted, "activate"),
        )
        event_append(
            session=session,
            kind=Event.Kind.TASK_STARTED,
            content=data.task,
            now=now,
            metadata={"initial_goal": data.initial_goal},
            seq=1,  # the session was created just above
        )
        # Imported history is working memory: a scope holding only imported sessions is
        # not a cold start (its turns rank with the memories).
        cold = (
            not Memory.objects.filter(scope=data.scope)
            .exclude(status=Memory.Status.FORGOTTEN)
            .exists()
            and not Session.objects.filter(
                scope=data.scope, ended_by=Session.EndedBy.IMPORT
            ).exists()
        )
        retrieval, page = retrieval_publish(
            session=session, prepared=prepared, query=data.task, now=now
        )
        lexical_only = page.pop("lexical_only")
        reply: dict[str, Any] = {
            "retrieval_id": retrieval.id,
            "session_id": session.id,
            "retrieval_policy_version": retrieval.policy_version,
            "memory_state": "cold_start" if cold else "available",
            "warnings": _warnings(data.scope, cold, lexical_only),
            "continuity_id": continuity.id,
            "continuity_state": continuity_state,
            "relevant_total": retrieval.relevant_total,
            "catalog_truncated": retrieval.catalog_truncated,
            **{k: v for k, v in page.items() if k != "retrieval_id"},
            **({"redacted": guard.redacted} if guard.redacted else {}),
        }
        return cast(ActivateOut, reply)  # the page is catalog data, untyped

"""Slowave's side of the LongMemEval bench: replay each question's haystack through the services
the MCP tools call, then ask the question with activate + recall (up to 10 items).

One scope per question. The history is replayed as it happened: sessions in date order, every
service called with ``now`` stopped at the session's date, and questions asked at their
``question_date``, so recency and relative dates ("last week") read as they would have. The
shared mechanics (one recorded session, one question, the consolidation pass) are slowave.py's.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from memory.schemas import RememberItem
from slowave_site.bench.longmemeval_data import CONTENT_LIMIT, HaystackSession, Question, documents
from slowave_site.bench.longmemeval_metrics import MAX_ITEMS, LmeResult
from slowave_site.bench.slowave import ask, consolidate_scope, consolidated_behind, remember_session
from slowave_site.bench.store import IngestSpec, file_sha256

Behind = dict[str, list[str]]  # memory id -> the turn keys behind it


def scope_for(question: Question) -> str:
    return f"project:lme-{question.question_id}"


def _stopped(moment: datetime) -> Callable[[], datetime]:
    """A clock stopped at ``moment``."""
    return lambda: moment


def remember_haystack_session(scope: str, session: HaystackSession, roles: str) -> Behind:
    """One haystack session as an agent would record it; memory id -> turn keys."""
    docs = documents(session, roles)
    if not docs:  # nothing said by an indexed role: nothing to remember, no session recorded
        return {}
    stamp = session.occurred_at.isoformat()
    items = [RememberItem(content=d.text, type="fact", occurred_at=stamp) for d in docs]
    ids = remember_session(
        scope=scope,
        task=f"Record the chat session {session.session_id} of {session.raw_date}",
        items=items,
        now=_stopped(session.occurred_at),
        summary=f"chat session {session.session_id} remembered",
    )
    behind: Behind = defaultdict(list)
    for doc, memory_id in zip(docs, ids, strict=True):
        if memory_id is not None:
            behind[memory_id].append(doc.turn.key)
    return behind


def ingest_sessions(
    scope: str, sessions: Sequence[HaystackSession], *, roles: str, consolidate: bool
) -> Behind:
    """Remember ``sessions`` (in date order) into ``scope``, then (optionally) one consolidation
    pass at the time of the last; memory id -> turn keys, each list deduplicated in order."""
    behind: Behind = defaultdict(list)
    for session in sessions:
        for memory_id, keys in remember_haystack_session(scope, session, roles).items():
            behind[memory_id].extend(keys)
    if consolidate and sessions:
        consolidate_scope(scope, now=sessions[-1].occurred_at)
        by_content: dict[str, list[str]] = defaultdict(list)
        for session in sessions:
            for doc in documents(session, roles):
                by_content[doc.text].append(doc.turn.key)
        behind.update(consolidated_behind(scope, by_content))
    return {memory_id: list(dict.fromkeys(keys)) for memory_id, keys in behind.items()}


def ingest_question(question: Question, *, roles: str = "user", consolidate: bool = True) -> Behind:
    """The question's own haystack into its own scope (``ingest_sessions``)."""
    return ingest_sessions(
        scope_for(question), question.chronological(), roles=roles, consolidate=consolidate
    )


def ask_question(
    question: Question, behind: Mapping[str, Sequence[str]], scope: str | None = None
) -> LmeResult:
    """Activate then recall with the question at its date, following cursors to 10 items, in
    ``scope`` (default: the question's own)."""
    items, timings = ask(
        question.question,
        scope or scope_for(question),
        behind,
        max_items=MAX_ITEMS,
        now=_stopped(question.question_date),
    )
    return LmeResult(question=question, items=items, latency_ms=timings)


def ingest_spec(
    path: str, bench: str, items: Sequence[str], roles: str, consolidate: bool, **extra: Any
) -> IngestSpec:
    """What a kept LongMemEval store was ingested from and how (per question or pooled)."""
    from django.conf import settings

    from memory import embeddings
    from memory.vectors import backend_name

    return IngestSpec(
        bench=bench,
        data_path=os.path.abspath(path),
        data_sha256=file_sha256(path),
        items=tuple(items),
        options={
            "roles": roles,
            "consolidation": consolidate,
            **extra,
            "embedder": embeddings.get_embedder().name,
            "vector_backend": backend_name(),
            "content_limit": CONTENT_LIMIT,
            "clock": "replayed",  # services ran with now = the session's date
            "min_relevance": settings.SLOWAVE_MIN_RELEVANCE,
        },
    )

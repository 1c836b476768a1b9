"""In-process helpers for consolidation tests: sessions built through the memory services.

Every write goes through the services the MCP tools call (activate, remember, feedback, commit,
transcript import): the session helpers are tests/factories.py's, with the signatures these
tests were written against. Tests then run passes and read the database.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from django.utils import timezone

from consolidation.services.passes import BY_NAME, CONSOLIDATION_PASSES, passes_run
from consolidation.services.runs import PassResult
from memory.ids import memory_pk
from memory.models import Memory
from memory.schemas import FeedbackIn
from memory.services.feedback import feedback_submit
from memory.services.transcripts import transcripts_import
from tests import factories

fresh_scope = factories.fresh_scope


def activate(scope: str, task: str, now: datetime | None = None) -> dict[str, Any]:
    return factories.open_session(scope, task, now=now)


def remember(
    scope: str, session_id: str, content: str, now: datetime | None = None, type_: str = "fact"
) -> int:
    (memory_id,) = factories.remember(scope, session_id, content, type_=type_, now=now)
    pk = memory_pk(memory_id)
    assert pk is not None, memory_id
    return pk


def feedback_all(
    reply: dict[str, Any], assessment: str = "irrelevant", now: datetime | None = None, **entry: Any
) -> dict[str, Any]:
    return feedback_submit(
        data=FeedbackIn(
            retrieval_id=reply["retrieval_id"],
            coverage="complete",
            memory_feedback=[
                {"memory_id": m["memory_id"], "assessment": assessment, **entry}
                for m in reply["memories"]
            ],
            procedure_feedback=[
                {"procedure_id": p["procedure_id"], "use": "not_used"} for p in reply["procedures"]
            ],
        ),
        now=now or timezone.now(),
    )


def commit(
    session_id: str,
    now: datetime | None = None,
    summary: str = "done",
    trajectory: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    return factories.commit(session_id, summary=summary, now=now, trajectory=trajectory)


def import_sessions(
    scope: str, sessions: list[list[tuple[str, str]]], now: datetime | None = None
) -> list[str]:
    """One imported (ended, episodes formed) session per list of (role, content) turns."""
    keys = [uuid.uuid4().hex[:12] for _ in sessions]
    lines = [
        json.dumps({"session_key": key, "role": role, "content": content})
        for key, turns in zip(keys, sessions, strict=True)
        for role, content in turns
    ]
    report = transcripts_import(lines=lines, scope=scope, now=now or timezone.now())
    return [row["session_id"] for row in report["sessions_created"]]


def run_consolidation(
    scope: str | None = None, now: datetime | None = None
) -> dict[str, PassResult]:
    results = passes_run(specs=CONSOLIDATION_PASSES, scope=scope, triggered_by="test", now=now)
    assert all(r.status == "succeeded" for r in results), [r.as_dict() for r in results]
    return {r.name: r for r in results}


def run_pass(name: str, scope: str | None = None, now: datetime | None = None) -> dict[str, int]:
    (result,) = passes_run(specs=(BY_NAME[name],), scope=scope, triggered_by="test", now=now)
    assert result.status == "succeeded", result.as_dict()
    return result.counts


def changes(counts: dict[str, int]) -> int:
    """Sum of a pass's change counts (full_sweep is a marker, not a change)."""
    return sum(v for k, v in counts.items() if k != "full_sweep")


def salience(pk: int) -> float:
    return Memory.objects.get(pk=pk).salience

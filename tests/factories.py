"""Factories: scopes, sessions, memories and retrievals made the way agents make them.

Every write goes through the services the MCP tools and REST routes call (activate, remember,
recall, commit), never through the ORM, so what a test starts from is a state the real system
can reach. They run in-process against pytest-django's test database (mark the test
`django_db`), or inside a subprocess that set Django up itself (tests/cli/seeding.py).

    scope = fresh_scope()                                # project:test-1a2b3c4d
    session = open_session(scope)                        # the activate reply: session_id, ...
    ids = remember(scope, session["session_id"], "Invoices go out monthly.")   # ["sch_12"]
    shown = retrieval(scope, task="When do invoices go out?")  # activate reply: retrieval_id

tests/conftest.py exposes the same as fixtures (`scope`, `session`, `memory_ids`, ...).
Replies are the services' own; a factory only fills in the arguments a test does not care about.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from django.utils import timezone

from memory.schemas import ActivateIn, CommitIn, RecallIn, RememberIn
from memory.services.activate import session_activate
from memory.services.commit import session_commit
from memory.services.recall import retrieval_recall
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo

VERIFIED = {"status": "verified", "summary": "checked by the test"}
GOAL = "finish the task"


def fresh_scope(name: str = "test", kind: str = "project") -> str:
    """A scope no other test uses (`kind:name-<8 hex>`), so tests sharing a database or a
    server never see each other's memories."""
    return f"{kind}:{name}-{uuid.uuid4().hex[:8]}"


def open_session(
    scope: str,
    task: str = "seed the scope",
    *,
    goal: str = GOAL,
    client: ClientInfo | None = None,
    now: datetime | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """`slowave_activate`: an open session (and the retrieval its task cued)."""
    return session_activate(
        data=ActivateIn(task=task, initial_goal=goal, scope=scope, **extra),
        client=client or ClientInfo(),
        now=now or timezone.now(),
    )


def remember(
    scope: str,
    session_id: str,
    *contents: str,
    type_: str = "fact",
    occurred_at: str | None = None,
    now: datetime | None = None,
) -> list[str]:
    """`slowave_remember`: the public ids (`sch_N`) in order. One content goes in the scalar
    form, several in one batch, as an agent would send them."""
    when = {"occurred_at": occurred_at} if occurred_at is not None else {}
    if len(contents) == 1:
        data = RememberIn(
            scope=scope, session_id=session_id, content=contents[0], type=type_, **when
        )
        return [memory_remember(data=data, now=now or timezone.now())["memory_id"]]
    items: list[dict[str, Any]] = [{"content": c, "type": type_, **when} for c in contents]
    reply = memory_remember(
        data=RememberIn(scope=scope, session_id=session_id, memories=items),
        now=now or timezone.now(),
    )
    return [result["data"]["memory_id"] for result in reply["results"]]


def commit(
    session_id: str,
    *,
    goal: str = GOAL,
    summary: str = "done",
    verification: dict[str, str] | None = None,
    now: datetime | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """`slowave_commit` with a verified success (pass `procedure=`, `trajectory=`, ...)."""
    return session_commit(
        data=CommitIn(
            session_id=session_id,
            final_goal=goal,
            outcome="success",
            outcome_summary=summary,
            verification=verification or VERIFIED,
            **extra,
        ),
        now=now or timezone.now(),
    )


def seeded_scope(
    *contents: str, scope: str | None = None, type_: str = "fact"
) -> tuple[str, list[str]]:
    """A scope holding `contents`, written in one session that is then committed cleanly."""
    scope = scope or fresh_scope()
    opened = open_session(scope)
    ids = remember(scope, opened["session_id"], *contents, type_=type_)
    commit(opened["session_id"])
    return scope, ids


def retrieval(scope: str, task: str, **extra: Any) -> dict[str, Any]:
    """A retrieval made by activating a new session on `task`: the activate reply, whose
    `retrieval_id` feedback can then be given on and `memories` were shown."""
    return open_session(scope, task, **extra)


def recall(
    scope: str, session_id: str, query: str, *, now: datetime | None = None, **extra: Any
) -> dict[str, Any]:
    """`slowave_recall` in an open session: a further retrieval, with its own retrieval_id."""
    return retrieval_recall(
        data=RecallIn(session_id=session_id, scope=scope, query=query, **extra),
        now=now or timezone.now(),
    )

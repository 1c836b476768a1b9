"""One timed agent lookup for `bench scale`: an activate, then a recall of the same question."""

from __future__ import annotations

import time

from django.utils import timezone

from memory.schemas import ActivateIn, RecallIn
from memory.services.activate import session_activate
from memory.services.recall import retrieval_recall
from memory.services.sessions import ClientInfo

CLIENT = ClientInfo(name="slowave-bench", version="1")


def ask(question: str, scope: str) -> tuple[float, float]:
    """Milliseconds for one activate and one recall of the question."""
    started = time.perf_counter()
    opened = session_activate(
        data=ActivateIn(task=question, initial_goal="answer", scope=scope),
        client=CLIENT,
        now=timezone.now(),
    )
    middle = time.perf_counter()
    retrieval_recall(
        data=RecallIn(session_id=opened["session_id"], scope=scope, query=question),
        now=timezone.now(),
    )
    return (middle - started) * 1000, (time.perf_counter() - middle) * 1000

"""Slowave's side of the LoCoMo bench: ingest through the services the MCP tools call, then ask
each question with activate + recall, following cursors up to 20 items (spec §13.1)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.utils import timezone

from memory.bench.locomo_data import Sample
from memory.bench.results import MAX_ITEMS, QuestionResult, RankedItem
from memory.models import Event, Memory, Support
from memory.schemas import (
    ActivateIn,
    CommitIn,
    FeedbackIn,
    MemoryFeedback,
    ProcedureFeedback,
    RecallIn,
    RememberIn,
    RememberItem,
    Verification,
)
from memory.services.activate import session_activate
from memory.services.commit import session_commit
from memory.services.feedback import feedback_submit
from memory.services.recall import retrieval_recall
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo

CLIENT = ClientInfo(name="slowave-bench", version="1")
BATCH = 256


def _feedback_all(reply: dict[str, Any], assessment: str = "irrelevant") -> None:
    if not reply["memories"] and not reply["procedures"]:
        return
    feedback_submit(
        data=FeedbackIn(
            retrieval_id=reply["retrieval_id"],
            coverage="complete",
            memory_feedback=[
                MemoryFeedback(memory_id=m["memory_id"], assessment=assessment)
                for m in reply["memories"]
            ],
            procedure_feedback=[
                ProcedureFeedback(procedure_id=p["procedure_id"], use="not_used")
                for p in reply["procedures"]
            ],
        ),
        now=timezone.now(),
    )


def ingest(sample: Sample, scope: str) -> dict[str, list[str]]:
    """Remember every turn as a fact; returns memory id → the dia_ids behind it."""
    behind: dict[str, list[str]] = defaultdict(list)
    for session in sample.sessions:
        opened = session_activate(
            data=ActivateIn(
                task=f"Record session {session.index} of the conversation between "
                f"{sample.speaker_a} and {sample.speaker_b}",
                initial_goal="remember what was said",
                scope=scope,
            ),
            client=CLIENT,
            now=timezone.now(),
        )
        turns = list(session.turns)
        for start in range(0, len(turns), BATCH):
            chunk = turns[start : start + BATCH]
            items = [
                RememberItem.model_validate(
                    {
                        "content": t.content,
                        "type": "fact",
                        **({"occurred_at": t.occurred_at.isoformat()} if t.occurred_at else {}),
                    }
                )
                for t in chunk
            ]
            reply = memory_remember(
                data=RememberIn(scope=scope, session_id=opened["session_id"], memories=items),
                now=timezone.now(),
            )
            for turn, result in zip(chunk, reply["results"], strict=True):
                if result["ok"]:
                    behind[result["data"]["memory_id"]].append(turn.dia_id)
        _feedback_all(opened)
        session_commit(
            data=CommitIn(
                session_id=opened["session_id"],
                final_goal="remember what was said",
                outcome="success",
                outcome_summary=f"session {session.index} remembered",
                verification=Verification(status="unverified", summary="bench ingest"),
            ),
            now=timezone.now(),
        )
    return behind


def ask(
    question: str, scope: str, behind: dict[str, list[str]]
) -> tuple[list[RankedItem], dict[str, list[float]]]:
    timings: dict[str, list[float]] = {"recall": [], "activate": []}
    started = time.perf_counter()
    opened = session_activate(
        data=ActivateIn(task=question, initial_goal="answer the question", scope=scope),
        client=CLIENT,
        now=timezone.now(),
    )
    timings["activate"].append((time.perf_counter() - started) * 1000)
    items: list[RankedItem] = []
    args: dict[str, Any] = {"session_id": opened["session_id"], "scope": scope, "query": question}
    while len(items) < MAX_ITEMS:
        started = time.perf_counter()
        page = retrieval_recall(data=RecallIn(**args), now=timezone.now())
        timings["recall"].append((time.perf_counter() - started) * 1000)
        for memory in page["memories"]:
            occurred = memory.get("provenance", {}).get("occurred_at")
            moment = datetime.fromtimestamp(occurred, UTC) if occurred else None
            items.append(
                RankedItem.from_content(
                    memory["content"],
                    moment,
                    behind.get(memory["memory_id"], []),
                    ref=memory["memory_id"],
                    pathway=memory["pathway"],
                )
            )
        if not page.get("continue_from"):
            break
        args = {
            "session_id": opened["session_id"],
            "scope": scope,
            "continue_from": page["continue_from"],
        }
    return items[:MAX_ITEMS], timings


def make_runner(
    consolidate: Callable[[str], None] | None = None,
) -> Callable[[Sample], list[QuestionResult]]:
    """A runner that ingests, optionally runs one consolidation pass over the scope, then asks."""

    def run(sample: Sample) -> list[QuestionResult]:
        return run_sample(sample, consolidate=consolidate)

    return run


def consolidated_turns(sample: Sample, scope: str) -> dict[str, list[str]]:
    """Consolidated memories stand for the turns of their member episodes (spec §13.1 step 7)."""
    by_content: dict[str, list[str]] = defaultdict(list)
    for turn in sample.turns:
        by_content[turn.content].append(turn.dia_id)
    episode_events: dict[int, set[int]] = defaultdict(set)
    members = Support.objects.filter(
        scope=scope,
        kind=Support.Kind.CONSOLIDATED_MEMBER,
        memory__origin=Memory.Origin.CONSOLIDATED,
        episode__isnull=False,
    )
    for memory_id, event_ids in members.values_list("memory_id", "episode__event_ids"):
        episode_events[memory_id].update(event_ids or [])
    contents = dict(
        Event.objects.filter(
            pk__in={e for ids in episode_events.values() for e in ids}
        ).values_list("pk", "content")
    )
    return {
        f"sch_{memory_id}": sorted(
            {d for e in events for d in by_content.get(contents.get(e, ""), [])}
        )
        for memory_id, events in episode_events.items()
    }


def run_sample(
    sample: Sample, consolidate: Callable[[str], None] | None = None
) -> list[QuestionResult]:
    scope = f"project:locomo-{sample.sample_id}"
    behind = ingest(sample, scope)
    if consolidate is not None:
        consolidate(scope)
        behind.update(consolidated_turns(sample, scope))
    results = []
    for question in sample.questions:
        items, timings = ask(question.question, scope, behind)
        results.append(QuestionResult(question=question, items=items, latency_ms=timings))
    return results

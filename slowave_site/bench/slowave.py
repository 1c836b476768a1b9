"""Slowave's side of the LoCoMo bench: ingest through the services the MCP tools call, then ask
each question with activate + recall, following cursors up to 20 items (spec §13.1).

``remember_session``, ``ask``, ``consolidate_scope`` and ``consolidated_behind`` are shared with
LongMemEval's side (longmemeval_slowave.py); the LoCoMo specifics are the rest.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from django.utils import timezone

from memory.models import Event, Memory, Support
from memory.replies.verbs import RememberBatchOut
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
from slowave_site.bench.locomo_data import Sample
from slowave_site.bench.results import MAX_ITEMS, QuestionResult, RankedItem

CLIENT = ClientInfo(name="slowave-bench", version="1")
BATCH = 256


def _feedback_all(
    reply: Mapping[str, Any], assessment: str = "irrelevant", *, now: datetime | None = None
) -> None:
    # Imported turns (episodes) are shown, not exposed: no feedback is owed for them.
    memories = [m for m in reply["memories"] if "memory_id" in m]
    if not memories and not reply["procedures"]:
        return
    feedback_submit(
        data=FeedbackIn(
            retrieval_id=reply["retrieval_id"],
            coverage="complete",
            memory_feedback=[
                MemoryFeedback(memory_id=m["memory_id"], assessment=assessment) for m in memories
            ],
            procedure_feedback=[
                ProcedureFeedback(procedure_id=p["procedure_id"], use="not_used")
                for p in reply["procedures"]
            ],
        ),
        now=now or timezone.now(),
    )


def remember_session(
    *,
    scope: str,
    task: str,
    items: Sequence[RememberItem],
    now: Callable[[], datetime] = timezone.now,
    summary: str = "session remembered",
) -> list[str | None]:
    """One recorded session, as an agent would: activate (``task`` names the session), batch
    remember of the items (≤256 per call), complete feedback on whatever activate exposed,
    commit, then the passages the remember calls left to the embeddings backfill pass, so every
    question meets fully embedded memories, consolidated or not. Returns each item's memory id
    (None if it was refused), in item order. ``now`` is read once per call, so a replayed
    history passes a clock stopped at the session's date."""
    opened = session_activate(
        data=ActivateIn(task=task, initial_goal="remember what was said", scope=scope),
        client=CLIENT,
        now=now(),
    )
    ids: list[str | None] = []
    for start in range(0, len(items), BATCH):
        reply = cast(  # the `memories` form answers with a batch
            RememberBatchOut,
            memory_remember(
                data=RememberIn(
                    scope=scope,
                    session_id=opened["session_id"],
                    memories=list(items[start : start + BATCH]),
                ),
                now=now(),
            ),
        )
        ids.extend(r["data"]["memory_id"] if r["ok"] else None for r in reply["results"])
    _feedback_all(opened, now=now())
    session_commit(
        data=CommitIn(
            session_id=opened["session_id"],
            final_goal="remember what was said",
            outcome="success",
            outcome_summary=summary,
            verification=Verification(status="unverified", summary="bench ingest"),
        ),
        now=now(),
    )
    from consolidation.services.backfill import embeddings_backfill

    embeddings_backfill(now=now(), scope=scope)
    return ids


def ingest(sample: Sample, scope: str) -> dict[str, list[str]]:
    """Remember every turn as a fact; returns memory id → the dia_ids behind it."""
    behind: dict[str, list[str]] = defaultdict(list)
    for session in sample.sessions:
        turns = list(session.turns)
        items = [
            RememberItem.model_validate(
                {
                    "content": t.content,
                    "type": "fact",
                    **({"occurred_at": t.occurred_at.isoformat()} if t.occurred_at else {}),
                }
            )
            for t in turns
        ]
        ids = remember_session(
            scope=scope,
            task=f"Record session {session.index} of the conversation between "
            f"{sample.speaker_a} and {sample.speaker_b}",
            items=items,
            summary=f"session {session.index} remembered",
        )
        for turn, memory_id in zip(turns, ids, strict=True):
            if memory_id is not None:
                behind[memory_id].append(turn.dia_id)
    return behind


def ask(
    question: str,
    scope: str,
    behind: Mapping[str, Sequence[str]],
    *,
    max_items: int = MAX_ITEMS,
    now: Callable[[], datetime] = timezone.now,
) -> tuple[list[RankedItem], dict[str, list[float]]]:
    """Activate (task = the question), then recall with it, following ``continue_from`` until
    ``max_items`` items or no more. Items carry the ids ``behind`` maps their memory to."""
    timings: dict[str, list[float]] = {"recall": [], "activate": []}
    started = time.perf_counter()
    opened = session_activate(
        data=ActivateIn(task=question, initial_goal="answer the question", scope=scope),
        client=CLIENT,
        now=now(),
    )
    timings["activate"].append((time.perf_counter() - started) * 1000)
    items: list[RankedItem] = []
    args: dict[str, Any] = {"session_id": opened["session_id"], "scope": scope, "query": question}
    while len(items) < max_items:
        started = time.perf_counter()
        page = retrieval_recall(data=RecallIn(**args), now=now())
        timings["recall"].append((time.perf_counter() - started) * 1000)
        items.extend(_ranked(memory, behind) for memory in page["memories"])
        if not page.get("continue_from"):
            break
        args = {
            "session_id": opened["session_id"],
            "scope": scope,
            "continue_from": page["continue_from"],
        }
    return items[:max_items], timings


def _ranked(memory: Mapping[str, Any], behind: Mapping[str, Sequence[str]]) -> RankedItem:
    """A memory (`memory_id`) or an imported turn shown among them (`episode_id`)."""
    occurred = memory.get("provenance", {}).get("occurred_at")
    moment = datetime.fromtimestamp(occurred, UTC) if occurred else None
    ref = memory.get("memory_id") or memory["episode_id"]
    return RankedItem.from_content(
        memory["content"],
        moment,
        list(behind.get(ref, [])),
        ref=ref,
        pathway=memory["pathway"],
    )


def make_runner(
    consolidate: Callable[[str], None] | None = None,
) -> Callable[[Sample], list[QuestionResult]]:
    """A runner that ingests, optionally runs one consolidation pass over the scope, then asks."""

    def run(sample: Sample) -> list[QuestionResult]:
        return run_sample(sample, consolidate=consolidate)

    return run


def consolidated_behind(
    scope: str, by_content: Mapping[str, Sequence[str]]
) -> dict[str, list[str]]:
    """Consolidated memories stand for the turns of their member episodes (spec §13.1 step 7):
    each member event is matched to the ids ``by_content`` lists for its exact text."""
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


def consolidated_turns(sample: Sample, scope: str) -> dict[str, list[str]]:
    """``consolidated_behind`` for a LoCoMo conversation's turns."""
    by_content: dict[str, list[str]] = defaultdict(list)
    for turn in sample.turns:
        by_content[turn.content].append(turn.dia_id)
    return consolidated_behind(scope, by_content)


def consolidate_scope(scope: str, now: datetime | None = None) -> None:
    """Passes 1–8 once over the scope, as the worker would after the sessions' commits
    (``now``: the passes' logical time, default the wall clock)."""
    from consolidation.services.passes import CONSOLIDATION_PASSES, passes_run

    passes_run(specs=CONSOLIDATION_PASSES, scope=scope, triggered_by="cli", now=now)


def isolate_scopes() -> int:
    """Hold every bench scope at generalization stage 0; the number of memories lowered.

    Each LoCoMo conversation and each LongMemEval question is its own user's history, but the
    bench keeps them in one database, where text shared between haystacks (LongMemEval's filler
    sessions recur across questions) corroborates across scopes and promotion (spec §7.4) would
    let one question's haystack into another's: 29 % of the items LongMemEval-S dev showed came
    from other questions. The baselines search one haystack each; so does Slowave once no stage
    is above 0 (stage_visible gates candidates and associated neighbours alike)."""
    return Memory.objects.filter(generalization_stage__gt=0).update(generalization_stage=0)


def scope_for(sample: Sample) -> str:
    return f"project:locomo-{sample.sample_id}"


def ingest_sample(
    sample: Sample, consolidate: Callable[[str], None] | None = None
) -> dict[str, list[str]]:
    """Remember the conversation, then (optionally) one consolidation pass; memory id → dia_ids."""
    scope = scope_for(sample)
    behind = ingest(sample, scope)
    if consolidate is not None:
        consolidate(scope)
        behind.update(consolidated_turns(sample, scope))
    return dict(behind)


def ask_sample(
    sample: Sample, behind: Mapping[str, Sequence[str]], scope: str | None = None
) -> list[QuestionResult]:
    scope = scope or scope_for(sample)
    isolate_scopes()
    results = []
    for question in sample.questions:
        items, timings = ask(question.question, scope, behind)
        results.append(QuestionResult(question=question, items=items, latency_ms=timings))
    return results


def run_sample(
    sample: Sample, consolidate: Callable[[str], None] | None = None
) -> list[QuestionResult]:
    return ask_sample(sample, ingest_sample(sample, consolidate))

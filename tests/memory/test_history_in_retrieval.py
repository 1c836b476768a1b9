"""Imported history ranked with the memories (issue 25), on the real database: a relevant
imported turn shows among an activation's memories (an episode, bounded, with provenance, not
an exposure), a live session's episodes never do, and a turn consolidation already made into
a shown memory shows as that memory alone."""

from __future__ import annotations

import json
import uuid

import pytest
from django.utils import timezone

from pydantic import TypeAdapter

from memory.models import Exposure, Memory, Prototype
from memory.replies.reads import RetrievalExplanationOut
from memory.selectors import retrieval_explain
from memory.services.transcripts import transcripts_import
from tests.consolidation.support import run_consolidation
from tests.factories import commit, fresh_scope, open_session, remember, retrieval

pytestmark = pytest.mark.django_db

ROUNDING = "Invoice totals are rounded half-even to the cent, once, after tax is summed per line."


def _import(scope: str, sessions: list[list[tuple[str, str]]]) -> None:
    lines = [
        json.dumps({"session_key": key, "role": role, "content": content})
        for key, turns in ((uuid.uuid4().hex[:12], s) for s in sessions)
        for role, content in turns
    ]
    transcripts_import(lines=lines, scope=scope, now=timezone.now())


def _turns(reply: dict) -> list[dict]:
    return [m for m in reply["memories"] if m["type"] == "episode"]


def test_an_imported_turn_ranks_with_memories_and_a_live_episode_does_not() -> None:
    imported = fresh_scope("imported")
    question = ("user", "How should invoice totals be rounded?")
    _import(imported, [[question, ("assistant", ROUNDING)]])
    opened = open_session(imported, "Store the ledger's language")
    remember(imported, opened["session_id"], "The ledger service is written in Go.")
    commit(opened["session_id"])

    shown = retrieval(imported, "Fix the rounding of invoice totals")
    (turn,) = _turns(shown)
    assert ROUNDING in turn["content"] and turn["pathway"] == "direct"
    assert turn["provenance"]["source_kind"] == "imported_session"
    assert not Exposure.objects.filter(
        retrieval_id=shown["retrieval_id"], target_kind="episode"
    ).exists()
    assert shown["relevant_total"] >= 1
    # `slowave explain` lists the turn with its signals, in the declared reply shape.
    explained = retrieval_explain(retrieval_id=shown["retrieval_id"]).as_data()
    TypeAdapter(RetrievalExplanationOut).validate_python(explained)
    (item,) = [i for i in explained["items"] if i["kind"] == "episode"]
    assert item["ref"] == turn["episode_id"] and not item["exposed"] and item["signals"]

    # The same words said in a live session are a memory and episodes, never a shown turn.
    live = fresh_scope("live")
    opened = open_session(live, "Decide the invoice rounding")
    remember(live, opened["session_id"], ROUNDING)
    commit(opened["session_id"])
    answer = retrieval(live, "Fix the rounding of invoice totals")
    assert [m["content"] for m in answer["memories"]] == [ROUNDING] and not _turns(answer)


def test_a_consolidated_turn_shows_as_its_memory_and_other_history_as_turns() -> None:
    scope = fresh_scope("ops")
    rotate = [
        [
            ("user", "How do I rotate the staging database credentials?"),
            ("assistant", "Run the rotate-creds job in the ops console, then restart API pods."),
        ]
    ] * 3
    _import(scope, rotate)
    run_consolidation(scope)
    (prototype,) = Prototype.objects.filter(scope=scope, memory__isnull=False)
    _import(
        scope,
        [
            [
                ("user", "Why did the staging credentials rotation fail last week?"),
                ("assistant", "The rotate-creds job failed because the vault token expired."),
            ]
        ],
    )

    shown = retrieval(scope, "Rotate the staging database credentials")
    memory = Memory.objects.get(pk=prototype.memory_id)
    assert f"sch_{memory.pk}" in {m.get("memory_id") for m in shown["memories"]}
    turns = _turns(shown)
    assert turns and all("vault token" in t["content"] for t in turns), turns


def test_a_long_turn_is_cut_to_the_token_budget_like_a_memory() -> None:
    scope = fresh_scope("budget")
    filler = " ".join(f"Step {i} of the checklist is unrelated housekeeping." for i in range(60))
    question = ("user", "How should invoice totals be rounded?")
    _import(scope, [[question, ("assistant", f"{filler} {ROUNDING}")]])
    shown = retrieval(scope, "Fix the rounding of invoice totals", max_tokens=256)
    (turn,) = _turns(shown)
    assert turn["content_truncated"] is True and turn["content_chars"] > 3_000
    assert "half-even" in turn["content"]
    assert len(json.dumps(turn, ensure_ascii=False, sort_keys=True)) <= 256 * 4
